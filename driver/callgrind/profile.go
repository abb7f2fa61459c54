package callgrind

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Symbol is one function of a dump: its ELF object (the dump's ob=, a path)
// and its name (fn=; a stripped binary's unnamed code is "0x…").
type Symbol struct{ Object, Function string }

// Call is one call edge of a dump: caller and callee.
type Call struct{ Caller, Callee Symbol }

// Profile is what one callgrind dump attributes: each function's exclusive
// (self) instructions, each call edge's inclusive instructions (what the
// callee and everything it called spent on the caller's behalf) and the
// dump's "totals:" line. The self costs sum to Total.
type Profile struct {
	Self  map[Symbol]int64
	Calls map[Call]int64
	Total int64
}

// ReadProfile parses the callgrind dump at path.
func ReadProfile(path string) (*Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := ParseProfile(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return p, nil
}

// ParseProfile reads a callgrind dump (callgrind's format, version 1:
// valgrind.org/docs/manual/cl-format.html) with Ir among its events. It is
// written here because no Go library reads the format and
// callgrind_annotate prints inclusive costs per function, not per call
// edge, and truncates names. It reads the parts this tool writes: ob=,
// fl=/fi=/fe=, fn=, cob=, cfi=/cfl=, cfn= with or without name compression
// ("(id) name", then "(id)"), calls= followed by the call's cost line, and
// cost lines of one or more positions then the events; jump lines are
// skipped.
func ParseProfile(r io.Reader) (*Profile, error) {
	p := &Profile{Self: map[Symbol]int64{}, Calls: map[Call]int64{}, Total: -1}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	names := map[string]map[string]string{} // "ob", "fl" or "fn" → id → name
	name := func(kind, v string) string {
		v = strings.TrimSpace(v)
		if !strings.HasPrefix(v, "(") {
			return v
		}
		end := strings.IndexByte(v, ')')
		if end < 0 {
			return v
		}
		id, rest := v[1:end], strings.TrimSpace(v[end+1:])
		// Objects (ob=, cob=), files (fl=, fi=, fe=, cfi=) and functions
		// (fn=, cfn=) each number their names.
		if names[kind] == nil {
			names[kind] = map[string]string{}
		}
		if rest != "" {
			names[kind][id] = rest
			return rest
		}
		return names[kind][id]
	}
	var (
		positions = 1  // columns before the events
		irCol     = -1 // column of Ir among the events
		ob, fn    string
		cob, cfn  string
		inCall    bool // the next cost line is a call's inclusive cost
		line      int
	)
	for sc.Scan() {
		line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		c := s[0]
		if (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
			if irCol < 0 {
				return nil, fmt.Errorf("line %d: cost before an events: line with Ir", line)
			}
			fields := strings.Fields(s)
			var ir int64
			if k := positions + irCol; k < len(fields) {
				v, err := strconv.ParseInt(fields[k], 10, 64)
				if err != nil {
					return nil, fmt.Errorf("line %d: cost %q: %w", line, fields[k], err)
				}
				ir = v
			} // a missing column is zero
			me := Symbol{ob, fn}
			if inCall {
				p.Calls[Call{me, Symbol{cob, cfn}}] += ir
				inCall, cob = false, ob // cob= names the next call's object only
			} else {
				p.Self[me] += ir
			}
			continue
		}
		key, val, ok := strings.Cut(s, "=")
		if !ok {
			key, val, ok = strings.Cut(s, ":")
			if !ok {
				continue
			}
		}
		switch key {
		case "ob":
			ob = name("ob", val)
			cob = ob
		case "fl", "fi", "fe", "cfi", "cfl":
			name("fl", val)
		case "fn":
			fn = name("fn", val)
		case "cob":
			cob = name("ob", val)
		case "cfn":
			cfn = name("fn", val)
		case "calls":
			inCall = true
		case "jump", "jcnd":
			// the jump's cost line follows; it is not a cost of the function
			inCall = false
		case "positions":
			positions = len(strings.Fields(val))
		case "events":
			irCol = -1
			for i, e := range strings.Fields(val) {
				if e == "Ir" {
					irCol = i
				}
			}
			if irCol < 0 {
				return nil, fmt.Errorf("line %d: events %q: no Ir", line, strings.TrimSpace(val))
			}
		case "totals":
			n, err := strconv.ParseInt(strings.Fields(val + " x")[irCol], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("line %d: totals %q: %w", line, strings.TrimSpace(val), err)
			}
			p.Total = n
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if p.Total < 0 {
		return nil, fmt.Errorf("no totals line (not a complete callgrind dump?)")
	}
	return p, nil
}

// SelfSum is the sum of every function's self cost: Total, in a dump
// callgrind wrote whole.
func (p *Profile) SelfSum() int64 {
	var n int64
	for _, v := range p.Self {
		n += v
	}
	return n
}

// Sub returns p less q, function by function and edge by edge (entries that
// cancel are dropped): what one window counted that another of the same
// requests did not.
func (p *Profile) Sub(q *Profile) *Profile {
	d := &Profile{Self: map[Symbol]int64{}, Calls: map[Call]int64{}, Total: p.Total - q.Total}
	for k, v := range p.Self {
		d.Self[k] = v
	}
	for k, v := range q.Self {
		if d.Self[k] -= v; d.Self[k] == 0 {
			delete(d.Self, k)
		}
	}
	for k, v := range p.Calls {
		d.Calls[k] = v
	}
	for k, v := range q.Calls {
		if d.Calls[k] -= v; d.Calls[k] == 0 {
			delete(d.Calls, k)
		}
	}
	return d
}
