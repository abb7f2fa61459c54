package profile

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"net/url"
	"slices"
	"strings"
	"testing"
)

const sweepYAML = `
base_headers: ["Host: bench.local"]
workloads:
  - {name: headers, method: GET, path: /safe, conns: [1, 16], expect: {default: 200}}
  - name: json_real
    method: POST
    path: /api
    body: {shape: json_real}
    sweep: {body.size: [0, 256, 1k, 4k, 64k]}
    conns: [1]
    expect: {default: 200}
  - name: form_args
    method: POST
    path: /form
    body: {shape: form}
    sweep: {args: [1, 10, 100]}
    conns: [1]
    expect: {default: 200}
  - name: headers_conns
    method: GET
    path: /safe
    sweep: {conns: [1, 4, 16]}
    expect: {default: 200}
  - name: curve
    method: GET
    path: /safe
    conns: [16]
    capacity_from: headers
    sweep: {load: [10%, 50%, 110%]}
    expect: {default: 200}
suites:
  s:
    repeats: 1
    duration: 1s
    workloads: [headers@16, json_real@1, form_args@args=10@1, headers_conns, curve@16]
`

func TestSweepExpansion(t *testing.T) {
	set, err := Parse("g.yaml", []byte(sweepYAML))
	if err != nil {
		t.Fatal(err)
	}
	cases, err := set.Cases(set.Suites["s"].Workloads)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cases {
		got = append(got, c.Key())
	}
	want := []string{"headers@16",
		"json_real@size=0@1", "json_real@size=256@1", "json_real@size=1k@1", "json_real@size=4k@1", "json_real@size=64k@1",
		"form_args@args=10@1",
		"headers_conns@1", "headers_conns@4", "headers_conns@16",
		"curve@load=10%@16", "curve@load=50%@16", "curve@load=110%@16"}
	if !slices.Equal(got, want) {
		t.Errorf("cases:\n got %v\nwant %v", got, want)
	}
	for _, c := range cases {
		if p := c.Workload.Point; p != nil {
			back, ok := ParsePoint(c.Workload.Name)
			if !ok || back != *p {
				t.Errorf("ParsePoint(%q): got %+v %v, want %+v", c.Workload.Name, back, ok, *p)
			}
		}
	}
	tests := []struct {
		key      string
		bodyLen  int
		fraction float64
		capKey   string
	}{
		{"json_real@size=0@1", 0, 0, ""},
		{"json_real@size=4k@1", 4096, 0, ""},
		{"json_real@size=64k@1", 65536, 0, ""},
		{"curve@load=110%@16", 0, 1.1, "headers@16"},
	}
	for _, tt := range tests {
		i := slices.Index(got, tt.key)
		if i < 0 {
			t.Fatalf("no case %s", tt.key)
		}
		c := cases[i]
		if n := len(c.Workload.BodyBytes()); n != tt.bodyLen {
			t.Errorf("%s body: got %d bytes, want %d", tt.key, n, tt.bodyLen)
		}
		if f := c.LoadFraction(); f != tt.fraction {
			t.Errorf("%s load fraction: got %v, want %v", tt.key, f, tt.fraction)
		}
		if k := c.CapacityKey(); k != tt.capKey {
			t.Errorf("%s capacity key: got %q, want %q", tt.key, k, tt.capKey)
		}
	}
	hs := set.HeaderPairs(set.Workloads["form_args@args=10"])
	if last := hs[len(hs)-1]; last != [2]string{"Content-Type", "application/x-www-form-urlencoded"} {
		t.Errorf("form content type: got %v", last)
	}
}

func TestSweepErrors(t *testing.T) {
	const head = "workloads:\n- {name: h, method: GET, path: /, conns: [1], expect: {default: 200}}\n"
	w := func(extra string) string {
		return head + "- {name: j, method: POST, path: /, conns: [1], expect: {default: 200}, " + extra + "}\n"
	}
	tests := []struct{ name, yaml, want string }{
		{"empty", w("body: {shape: json_real}, sweep: {body.size: []}"), "workload j: sweep body.size: range [] is empty"},
		{"not increasing", w("body: {shape: json_real}, sweep: {body.size: [0, 4k, 1k]}"), "workload j: sweep body.size: range [0, 4k, 1k] is not increasing (1k after 4k)"},
		{"repeated", w("body: {shape: form}, sweep: {args: [1, 10, 10]}"), "range [1, 10, 10] is not increasing"},
		{"bad size", w("body: {shape: json_real}, sweep: {body.size: [1x]}"), "want a size in bytes"},
		{"below shape", w("body: {shape: json_real}, sweep: {body.size: [10]}"), "below the smallest json_real body"},
		{"two params", w("body: {shape: form}, sweep: {args: [1], conns: [1]}"), "want one parameter"},
		{"unknown param", w("sweep: {speed: [1]}"), `unknown parameter "speed"`},
		{"args without form", w("body: {shape: json_real, size: 300}, sweep: {args: [1, 2]}"), "want body.shape form"},
		{"load without capacity", w("sweep: {load: [10%, 50%]}"), "workload j: sweep load: range [10%, 50%] needs a capacity figure"},
		{"load not percent", w("capacity: 100, sweep: {load: [0.1]}"), "want a percentage"},
		{"size too large", w("body: {shape: json_real}, sweep: {body.size: [1k, 64m]}"), "want at most 16m, got 64m"},
		{"negative capacity", w("capacity: -5, sweep: {load: [10%]}"), "capacity: want req/s > 0"},
		{"conns twice", w("sweep: {conns: [1, 2]}"), "not both"},
		{"shape with content type", w(`headers: ["Content-Type: text/plain"], body: {shape: json_real, size: 4096}`), "sets Content-Type itself"},
		{"unknown shape", w("body: {shape: xml, size: 10}"), `body.shape: want json_value, json_real, form or multipart, got "xml"`},
		{"capacity later", head + "- {name: c, method: GET, path: /, conns: [1], capacity_from: h, sweep: {load: [50%]}, expect: {default: 200}}\n" +
			"suites:\n  s: {repeats: 1, duration: 1s, workloads: [c, h]}\n", "workload c@load=50%@1: rate sweep without a capacity figure: its capacity_from h@1 must run earlier"},
		{"capacity unknown", head + "- {name: c, method: GET, path: /, conns: [1], capacity_from: zz, sweep: {load: [50%]}, expect: {default: 200}}\n", `capacity_from: want a plain closed-loop workload, got "zz"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(tt.yaml))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestShapes(t *testing.T) {
	for _, size := range []int{14, 100, 256, 1000, 1024, 4096, 16 << 10, 64 << 10, 256 << 10} {
		for _, shape := range []string{shapeJSONValue, shapeJSONReal, shapeMultipart} {
			if size < minShapeSize(shape) {
				continue
			}
			b, err := shapeBody(shape, size, 0)
			if err != nil {
				t.Fatalf("%s %d: %v", shape, size, err)
			}
			if len(b) != size {
				t.Errorf("%s %d: got %d bytes", shape, size, len(b))
			}
			again, _ := shapeBody(shape, size, 0)
			if !bytes.Equal(b, again) {
				t.Errorf("%s %d: two generations differ", shape, size)
			}
			switch shape {
			case shapeJSONValue, shapeJSONReal:
				if !json.Valid(b) {
					t.Errorf("%s %d: not valid JSON: %.80s…", shape, size, b)
				}
			case shapeMultipart:
				checkMultipart(t, size, b)
			}
		}
	}
	// Realistic JSON: many short fields, never more leaves than the
	// engines inspect.
	for _, size := range []int{1024, 64 << 10, 256 << 10} {
		b, _ := shapeBody(shapeJSONReal, size, 0)
		var v any
		if err := json.Unmarshal(b, &v); err != nil {
			t.Fatal(err)
		}
		n := leaves(v)
		if size == 1024 && n < 20 {
			t.Errorf("json_real 1k: got %d leaves, want many short fields (≥ 20)", n)
		}
		if n > 1000 {
			t.Errorf("json_real %d: got %d leaves, want ≤ 1000 (the engines' argument limit)", size, n)
		}
	}
	for _, args := range []int{1, 10, 100, 1000} {
		b, _ := shapeBody(shapeForm, 0, args)
		q, err := url.ParseQuery(string(b))
		if err != nil || len(q) != args {
			t.Errorf("form %d: got %d fields (%v)", args, len(q), err)
		}
	}
}

func leaves(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += leaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += leaves(e)
		}
		return n
	}
	return 1
}

func checkMultipart(t *testing.T, size int, b []byte) {
	t.Helper()
	_, params, err := mime.ParseMediaType(shapes[shapeMultipart])
	if err != nil {
		t.Fatal(err)
	}
	r := multipart.NewReader(bytes.NewReader(b), params["boundary"])
	var names []string
	fileLen := 0
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("multipart %d: %v", size, err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			t.Fatalf("multipart %d: %v", size, err)
		}
		names = append(names, p.FormName())
		if p.FileName() != "" {
			fileLen = len(data)
		}
	}
	if !slices.Equal(names, []string{"title", "upload"}) {
		t.Errorf("multipart %d: parts %v, want [title upload]", size, names)
	}
	if want := size - minShapeSize(shapeMultipart); fileLen != want {
		t.Errorf("multipart %d: file part %d bytes, want %d", size, fileLen, want)
	}
}

// TestGrowthProfile: the committed growth and scale suites load, expand
// to the points the report expects, and every generated body is the size
// its name says.
func TestGrowthProfile(t *testing.T) {
	set, err := LoadDir("../../profiles")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"growth": 32, "scale": 2} {
		su := set.Suites[name]
		if su == nil {
			t.Fatalf("no %s suite in profiles/", name)
		}
		cases, err := set.Cases(su.Workloads)
		if err != nil {
			t.Fatal(err)
		}
		if len(cases) != want {
			t.Errorf("%s: got %d cases, want %d", name, len(cases), want)
		}
		for _, c := range cases {
			p := c.Workload.Point
			if p == nil || p.Param != ParamSize {
				continue
			}
			if got := len(c.Workload.BodyBytes()); got != int(p.Value) {
				t.Errorf("%s: body %d bytes, want %v", c.Key(), got, p.Value)
			}
		}
	}
}
