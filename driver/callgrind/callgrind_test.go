package callgrind

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestParseProfile reads the parts of callgrind's format a dump of this
// tool holds: objects persisting across functions, call edges whose cost
// line is inclusive (not the caller's self cost), cob= naming one call's
// object only, name compression, jump lines and recursion suffixes.
func TestParseProfile(t *testing.T) {
	const dump = `# callgrind format
version: 1
positions: line
events: Ir
summary: 1
ob=(1) /lib/libc.so.6
fl=(1) ???
fn=(1) start_thread
0 10
cob=(2) /bin/envoy
cfn=(2) 0x0000000000001000
calls=1 0
0 100
0 5
ob=(2)
fn=(2)
0 40
cfn=(3) malloc
calls=2 0
0 60
jcnd=1/2 +3 0
* 0
fn=(3)
0 60
fn=(4) f'2
0 1
totals: 116
`
	got, err := ParseProfile(strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	libc, envoy := "/lib/libc.so.6", "/bin/envoy"
	wantSelf := map[Symbol]int64{{libc, "start_thread"}: 15, {envoy, "0x0000000000001000"}: 40, {envoy, "malloc"}: 60, {envoy, "f'2"}: 1}
	wantCalls := map[Call]int64{
		{Symbol{libc, "start_thread"}, Symbol{envoy, "0x0000000000001000"}}: 100,
		{Symbol{envoy, "0x0000000000001000"}, Symbol{envoy, "malloc"}}:      60,
	}
	if !maps.Equal(got.Self, wantSelf) || !maps.Equal(got.Calls, wantCalls) || got.Total != 116 || got.SelfSum() != 116 {
		t.Fatalf("got self %v, calls %v, total %d; want %v, %v, 116", got.Self, got.Calls, got.Total, wantSelf, wantCalls)
	}
	for _, bad := range []struct{ text, err string }{
		{"events: Ir\nfn=main\n0 5\n", "no totals line"},
		{"fn=main\n0 5\ntotals: 5\n", "cost before an events"},
		{"events: Dr\n", "no Ir"},
		{"events: Ir\nfn=main\n0 many\ntotals: 5\n", `cost "many"`},
	} {
		if _, err := ParseProfile(strings.NewReader(bad.text)); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%q: got %v, want an error containing %q", bad.text, err, bad.err)
		}
	}
}

// TestSub checks that a difference of profiles keeps what differs, edges
// included, and drops what cancels.
func TestSub(t *testing.T) {
	a, b := Symbol{"x", "a"}, Symbol{"x", "b"}
	p := &Profile{Self: map[Symbol]int64{a: 10, b: 5}, Calls: map[Call]int64{{a, b}: 5}, Total: 15}
	q := &Profile{Self: map[Symbol]int64{a: 4, b: 5}, Calls: map[Call]int64{{a, b}: 5}, Total: 9}
	d := p.Sub(q)
	if want := map[Symbol]int64{a: 6}; !maps.Equal(d.Self, want) || len(d.Calls) != 0 || d.Total != 6 {
		t.Fatalf("got %v %v %d; want %v, no calls, 6", d.Self, d.Calls, d.Total, want)
	}
}

func TestMeterFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meter.flag")
	m, err := NewMeter(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, on := range []bool{true, false, true} {
		if err := m.ExcludeHooks(on); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		want := "0"
		if on {
			want = "1"
		}
		if err != nil || string(b) != want {
			t.Fatalf("ExcludeHooks(%v): file holds %q, %v; want %q", on, b, err, want)
		}
	}
}
