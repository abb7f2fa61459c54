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
	ps := &profileParser{
		p:         &Profile{Self: map[Symbol]int64{}, Calls: map[Call]int64{}, Total: -1},
		names:     map[string]map[string]string{},
		positions: 1,
		irCol:     -1,
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		ps.line++
		s := sc.Text()
		if s == "" || s[0] == '#' {
			continue
		}
		c := s[0]
		if (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '*' {
			if err := ps.cost(s); err != nil {
				return nil, err
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
		if err := ps.spec(key, val); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if ps.p.Total < 0 {
		return nil, fmt.Errorf("no totals line (not a complete callgrind dump?)")
	}
	return ps.p, nil
}

// profileParser is ParseProfile's state between lines.
type profileParser struct {
	p         *Profile
	names     map[string]map[string]string // "ob", "fl" or "fn" → id → name
	positions int                          // columns before the events
	irCol     int                          // column of Ir among the events
	ob, fn    string
	cob, cfn  string
	inCall    bool // the next cost line is a call's inclusive cost
	line      int
}

// name resolves a compressed name "(id) name" or "(id)" of kind.
func (ps *profileParser) name(kind, v string) string {
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
	if ps.names[kind] == nil {
		ps.names[kind] = map[string]string{}
	}
	if rest != "" {
		ps.names[kind][id] = rest
		return rest
	}
	return ps.names[kind][id]
}

// cost adds a cost line's Ir to the current function's self cost, or to
// the call the preceding calls= line announced.
func (ps *profileParser) cost(s string) error {
	if ps.irCol < 0 {
		return fmt.Errorf("line %d: cost before an events: line with Ir", ps.line)
	}
	fields := strings.Fields(s)
	var ir int64
	if k := ps.positions + ps.irCol; k < len(fields) {
		v, err := strconv.ParseInt(fields[k], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: cost %q: %w", ps.line, fields[k], err)
		}
		ir = v
	} // a missing column is zero
	me := Symbol{ps.ob, ps.fn}
	if ps.inCall {
		ps.p.Calls[Call{me, Symbol{ps.cob, ps.cfn}}] += ir
		ps.inCall, ps.cob = false, ps.ob // cob= names the next call's object only
	} else {
		ps.p.Self[me] += ir
	}
	return nil
}

// spec applies a specification line key=val (or key: val).
func (ps *profileParser) spec(key, val string) error {
	switch key {
	case "ob":
		ps.ob = ps.name("ob", val)
		ps.cob = ps.ob
	case "fl", "fi", "fe", "cfi", "cfl":
		ps.name("fl", val)
	case "fn":
		ps.fn = ps.name("fn", val)
	case "cob":
		ps.cob = ps.name("ob", val)
	case "cfn":
		ps.cfn = ps.name("fn", val)
	case "calls":
		ps.inCall = true
	case "jump", "jcnd":
		// the jump's cost line follows; it is not a cost of the function
		ps.inCall = false
	case "positions":
		ps.positions = len(strings.Fields(val))
	case "events":
		ps.irCol = -1
		for i, e := range strings.Fields(val) {
			if e == "Ir" {
				ps.irCol = i
			}
		}
		if ps.irCol < 0 {
			return fmt.Errorf("line %d: events %q: no Ir", ps.line, strings.TrimSpace(val))
		}
	case "totals":
		n, err := strconv.ParseInt(strings.Fields(val + " x")[ps.irCol], 10, 64)
		if err != nil {
			return fmt.Errorf("line %d: totals %q: %w", ps.line, strings.TrimSpace(val), err)
		}
		ps.p.Total = n
	}
	return nil
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
