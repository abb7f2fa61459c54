package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"wafbench/driver/load"
)

// Sweep parameters a workload can declare a range over (Workload.Sweep).
const (
	// ParamSize is the body size in bytes (body.shape or fill bodies);
	// values are counts or sizes with a binary suffix: 0, 256, 1k, 64k, 1m.
	ParamSize = "body.size"
	// ParamArgs is the number of form fields (body.shape: form).
	ParamArgs = "args"
	// ParamConns is the number of client connections.
	ParamConns = "conns"
	// ParamLoad is the open-loop offered rate as a percentage of the
	// mode's closed-loop capacity (capacity_from or capacity): 10%, 110%.
	ParamLoad = "load"
)

// maxLoadFraction is the highest offered load a load sweep may ask for,
// as a fraction of capacity.
const maxLoadFraction = 5.0

// maxBodySize bounds a generated body (bytes): each is built in memory
// once per case, and the modules answer 413 above 1 MiB anyway.
const maxBodySize = 16 << 20

// value is one entry of a sweep range as written in YAML: a number, or a
// string (a size "4k", a percentage "10%").
type value string

// UnmarshalJSON accepts a JSON number or string.
func (v *value) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*v = value(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a number or a string, got %s", b)
	}
	*v = value(n.String())
	return nil
}

// point is where a workload sits in its sweep: the parameter, its value
// (bytes, fields, connections or a fraction of capacity) and the label
// that names it ("4k", "100", "10%").
type point struct {
	Base  string  // the sweep's workload name
	Param string  // ParamSize, ParamArgs or ParamLoad
	Value float64 // bytes, fields, or a fraction of capacity
	Label string
}

// pointKey is the short name of a parameter inside point names.
var pointKey = map[string]string{ParamSize: "size", ParamArgs: "args", ParamLoad: "load", paramN: "n"}

// PointName is the workload name of one point of a sweep: base@size=4k,
// base@args=100, base@load=10%.
func PointName(base, param, label string) string { return base + "@" + pointKey[param] + "=" + label }

// ParsePoint reads a point name back: ok is false for a name that is not
// one (a plain workload).
func ParsePoint(name string) (p point, ok bool) {
	base, rest, found := strings.Cut(name, "@")
	if !found {
		return point{}, false
	}
	k, label, found := strings.Cut(rest, "=")
	if !found {
		return point{}, false
	}
	for param, short := range pointKey {
		if short != k {
			continue
		}
		v, err := parseValue(param, value(label))
		if err != nil {
			return point{}, false
		}
		return point{Base: base, Param: param, Value: v, Label: label}, true
	}
	return point{}, false
}

// parseValue reads one range entry for param.
func parseValue(param string, v value) (float64, error) {
	s := strings.TrimSpace(string(v))
	switch param {
	case ParamSize:
		n, err := parseSize(s)
		if err == nil && n > maxBodySize {
			err = fmt.Errorf("want at most %s, got %s", SizeLabel(maxBodySize), s)
		}
		return float64(n), err
	case paramN:
		n, err := parseSize(s)
		return float64(n), err
	case ParamArgs, ParamConns:
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("want a whole number, got %q", s)
		}
		return float64(n), nil
	case ParamLoad:
		p, ok := strings.CutSuffix(s, "%")
		if !ok {
			return 0, fmt.Errorf("want a percentage of capacity like 50%%, got %q", s)
		}
		f, err := strconv.ParseFloat(p, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, fmt.Errorf("want a percentage of capacity like 50%%, got %q", s)
		}
		return f / 100, nil
	}
	return 0, fmt.Errorf("unknown parameter %q", param)
}

// parseSize reads a byte count with an optional binary suffix k or m
// (1k = 1024).
func parseSize(s string) (int, error) {
	mult := 1
	num := s
	switch {
	case strings.HasSuffix(s, "k"), strings.HasSuffix(s, "K"):
		mult, num = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "m"), strings.HasSuffix(s, "M"):
		mult, num = 1<<20, s[:len(s)-1]
	}
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 || n > math.MaxInt32/mult {
		return 0, fmt.Errorf("want a size in bytes like 256, 4k or 1m, got %q", s)
	}
	return n * mult, nil
}

// SizeLabel is the canonical label of a size: 256, 4k, 1m.
func SizeLabel(n int) string {
	switch {
	case n > 0 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + "m"
	case n > 0 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + "k"
	}
	return strconv.Itoa(n)
}

// expand turns a workload that declares a sweep into its points (for a
// conns sweep, the workload itself with the range as its conns). Errors
// name the workload, the parameter and the range as written.
func (w *Workload) expand() ([]Workload, error) {
	where := "workload " + w.Name
	if w.Capacity < 0 || math.IsNaN(w.Capacity) || math.IsInf(w.Capacity, 0) {
		return nil, fmt.Errorf("%s: capacity: want req/s > 0 (or leave it out), got %g", where, w.Capacity)
	}
	if len(w.Sweep) == 0 {
		return []Workload{*w}, nil
	}
	if len(w.Sweep) > 1 {
		return nil, fmt.Errorf("%s: sweep: want one parameter, got %d", where, len(w.Sweep))
	}
	var param string
	var rng []value
	for k, v := range w.Sweep {
		param, rng = k, v
	}
	written := "[" + joinValues(rng) + "]"
	vals, err := sweepValues(where, param, rng, written)
	if err != nil {
		return nil, err
	}
	if param == ParamConns {
		if len(w.Conns) > 0 {
			return nil, fmt.Errorf("%s: sweep conns: give conns either as the sweep or as conns, not both", where)
		}
		if vals[0] < 1 || vals[len(vals)-1] > load.MaxConns {
			return nil, fmt.Errorf("%s: sweep conns: range %s: want 1..%d", where, written, load.MaxConns)
		}
		out := *w
		out.Sweep = nil
		for _, v := range vals {
			out.Conns = append(out.Conns, int(v))
		}
		return []Workload{out}, nil
	}
	if err := w.checkSweep(where, param, vals, written); err != nil {
		return nil, err
	}
	return w.sweepPoints(param, rng, vals), nil
}

// sweepValues parses the range rng (as written) of the sweep of param,
// which must be non-empty and increasing.
func sweepValues(where, param string, rng []value, written string) ([]float64, error) {
	if len(rng) == 0 {
		return nil, fmt.Errorf("%s: sweep %s: range %s is empty", where, param, written)
	}
	vals := make([]float64, len(rng))
	for i, v := range rng {
		f, err := parseValue(param, v)
		if err != nil {
			if strings.HasPrefix(err.Error(), "unknown parameter") {
				return nil, fmt.Errorf("%s: sweep: unknown parameter %q (want %s, %s, %s, %s or %s)", where, param, ParamSize, ParamArgs, ParamConns, ParamLoad, paramN)
			}
			return nil, fmt.Errorf("%s: sweep %s: range %s: %v", where, param, written, err)
		}
		if i > 0 && !(f > vals[i-1]) {
			return nil, fmt.Errorf("%s: sweep %s: range %s is not increasing (%s after %s)", where, param, written, v, rng[i-1])
		}
		vals[i] = f
	}
	return vals, nil
}

// checkSweep checks that w has what a sweep of param over vals varies.
func (w *Workload) checkSweep(where, param string, vals []float64, written string) error {
	switch param {
	case ParamSize:
		if w.Body == nil || (w.Body.Shape == "" && w.Body.Fill == "") {
			return fmt.Errorf("%s: sweep body.size: want a body with a shape or a fill", where)
		}
	case ParamArgs:
		if w.Body == nil || w.Body.Shape != shapeForm {
			return fmt.Errorf("%s: sweep args: want body.shape %s", where, shapeForm)
		}
		if vals[0] < 1 {
			return fmt.Errorf("%s: sweep args: range %s: want ≥ 1 fields", where, written)
		}
	case paramN:
		if w.Generate == nil {
			return fmt.Errorf("%s: sweep generate.size: want a generate input", where)
		}
	case ParamLoad:
		if w.CapacityFrom == "" && w.Capacity <= 0 {
			return fmt.Errorf("%s: sweep load: range %s needs a capacity figure: capacity_from (a closed-loop workload run earlier in the suite) or capacity (req/s)", where, written)
		}
		if vals[0] <= 0 || vals[len(vals)-1] > maxLoadFraction {
			return fmt.Errorf("%s: sweep load: range %s: want percentages in (0%%, %g%%]", where, written, maxLoadFraction*100)
		}
	}
	return nil
}

// sweepPoints are w's workloads at each value of its sweep of param.
func (w *Workload) sweepPoints(param string, rng []value, vals []float64) []Workload {
	var out []Workload
	for i, v := range vals {
		p := *w
		p.Sweep = nil
		label := strings.TrimSpace(string(rng[i]))
		switch param {
		case ParamSize:
			body := *w.Body
			body.Size = int(v)
			p.Body = &body
			label = SizeLabel(int(v))
		case ParamArgs:
			body := *w.Body
			body.Args = int(v)
			p.Body = &body
		case paramN:
			g := *w.Generate
			g.N = int(v)
			p.Generate = &g
			label = SizeLabel(int(v))
		}
		p.Name = PointName(w.Name, param, label)
		p.Point = &point{Base: w.Name, Param: param, Value: v, Label: label}
		out = append(out, p)
	}
	return out
}

func joinValues(vs []value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// validateShape checks a shaped body; fill bodies are checked by validate.
func (b *body) validateShape(where string, headers []string) error {
	if _, ok := shapes[b.Shape]; !ok {
		return fmt.Errorf("%s: body.shape: want %s, %s, %s or %s, got %q", where, shapeJSONValue, shapeJSONReal, shapeForm, shapeMultipart, b.Shape)
	}
	if b.Literal != "" || b.Fill != "" || b.Prefix != "" || b.Suffix != "" {
		return fmt.Errorf("%s: body: shape excludes literal, prefix, fill and suffix", where)
	}
	for _, h := range headers {
		if k, _, _ := splitHeader(h); strings.EqualFold(k, "Content-Type") {
			return fmt.Errorf("%s: headers: body.shape %s sets Content-Type itself; remove %q", where, b.Shape, h)
		}
	}
	if b.Shape == shapeForm {
		if b.Args > 100000 {
			return fmt.Errorf("%s: body: args: want at most 100000 fields, got %d", where, b.Args)
		}
		if b.Args < 1 || b.Size != 0 {
			return fmt.Errorf("%s: body: shape form wants args ≥ 1 (fields) and no size, got args %d size %d", where, b.Args, b.Size)
		}
		return nil
	}
	if b.Args != 0 {
		return fmt.Errorf("%s: body: args applies to shape form only", where)
	}
	if m := minShapeSize(b.Shape); b.Size != 0 && b.Size < m {
		return fmt.Errorf("%s: body: size %d is below the smallest %s body (%d bytes; 0 = empty body)", where, b.Size, b.Shape, m)
	}
	if b.Size < 0 || b.Size > maxBodySize {
		return fmt.Errorf("%s: body: size: want 0..%d bytes, got %d", where, maxBodySize, b.Size)
	}
	return nil
}

// checkCapacity requires the capacity source of every load-sweep point
// without a given capacity to run earlier in cases, at the same conns.
func checkCapacity(cases []Case) error {
	pos := map[string]int{}
	for i, c := range cases {
		pos[c.Key()] = i
	}
	for i, c := range cases {
		w := c.Workload
		if w.Point == nil || w.Point.Param != ParamLoad || w.Capacity > 0 {
			continue
		}
		src := w.CapacityFrom + "@" + strconv.Itoa(c.Conns)
		j, ok := pos[src]
		if !ok || j > i {
			return fmt.Errorf("workload %s: rate sweep without a capacity figure: its capacity_from %s must run earlier in the same list (or give capacity: req/s)", c.Key(), src)
		}
		if cases[j].Workload.Point != nil && cases[j].Workload.Point.Param == ParamLoad {
			return fmt.Errorf("workload %s: capacity_from %s is itself a rate sweep point; name a closed-loop workload", c.Key(), src)
		}
	}
	return nil
}

// CapacityKey is the case whose closed-loop throughput is c's capacity
// (load sweeps with capacity_from); "" otherwise.
func (c Case) CapacityKey() string {
	w := c.Workload
	if w.Point == nil || w.Point.Param != ParamLoad || w.Capacity > 0 {
		return ""
	}
	return w.CapacityFrom + "@" + strconv.Itoa(c.Conns)
}

// LoadFraction is the offered load of a rate-sweep point as a fraction of
// capacity; 0 for any other case.
func (c Case) LoadFraction() float64 {
	if p := c.Workload.Point; p != nil && p.Param == ParamLoad {
		return p.Value
	}
	return 0
}
