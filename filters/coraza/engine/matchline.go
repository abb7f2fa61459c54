package engine

import (
	"strconv"
	"strings"

	"github.com/corazawaf/coraza/v3/types"
)

// matchLinePrefix starts every MatchLine.
const matchLinePrefix = "wafbench-match"

// MatchLine is the line the CRS conformance runner parses for one rule
// match:
//
//	wafbench-match [id "<id>"] [msg "<msg>"] [data "<data>"] [tx "<tx>"]
//
// with the message and data as Coraza expanded them, and '"' and '\' in
// values escaped as \" and \\, newlines as \n (the contract shared with the
// C++ module's MatchLine, filters/modsecurity/engine.h).
func MatchLine(mr types.MatchedRule) string {
	return matchLine(mr.Rule().ID(), mr.Message(), mr.Data(), mr.TransactionID())
}

func matchLine(id int, msg, data, tx string) string {
	var b strings.Builder
	b.Grow(len(matchLinePrefix) + len(msg) + len(data) + len(tx) + 48)
	b.WriteString(matchLinePrefix)
	quoted(&b, "id", strconv.Itoa(id))
	quoted(&b, "msg", msg)
	quoted(&b, "data", data)
	quoted(&b, "tx", tx)
	return b.String()
}

// quoted appends ` [name "value"]` with value escaped. strconv.Quote would
// also escape non-ASCII and control bytes, which the contract keeps as
// they are.
func quoted(b *strings.Builder, name, value string) {
	b.WriteString(" [")
	b.WriteString(name)
	b.WriteString(` "`)
	for i := 0; i < len(value); i++ {
		switch c := value[i]; c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteString(`"]`)
}
