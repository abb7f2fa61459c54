package replay

import (
	"reflect"
	"strings"
	"testing"

	schema "github.com/coreruleset/ftw-tests-schema/v2/types"
)

// TestReadCRS: a selection is deterministic in its seed, drawn from the
// eligible tests of the rules it names, in suite order, and every entry
// is a request load can send as the test writes it.
func TestReadCRS(t *testing.T) {
	c, err := CRSCandidates()
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Entries) < maxEntries {
		t.Fatalf("%d eligible tests, want at least %d", len(c.Entries), maxEntries)
	}
	a, err := ReadCRS(CRSSelect{Count: 40, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ReadCRS(CRSSelect{Count: 40, Seed: 1})
	other, _ := ReadCRS(CRSSelect{Count: 40, Seed: 2})
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed selected different tests")
	}
	if reflect.DeepEqual(a, other) {
		t.Error("seeds 1 and 2 selected the same tests")
	}
	order := map[string]int{}
	for i, e := range c.Entries {
		order[e.Name] = i
	}
	for i, e := range a {
		if i > 0 && order[e.Name] <= order[a[i-1].Name] {
			t.Errorf("%s after %s: want suite order", e.Name, a[i-1].Name)
		}
		if e.Host != "" || !strings.HasPrefix(e.Target, "/") {
			t.Errorf("%s: host %q target %q: want the Host header in place and an origin-form target", e.Name, e.Host, e.Target)
		}
		hosts := 0
		for _, h := range e.Headers {
			switch strings.ToLower(h[0]) {
			case "host":
				hosts++
			case "connection", "content-length", "transfer-encoding":
				t.Errorf("%s: header %s: load owns framing and connections", e.Name, h[0])
			}
		}
		if hosts != 1 {
			t.Errorf("%s: %d Host headers, want 1", e.Name, hosts)
		}
	}
	sqli, err := ReadCRS(CRSSelect{Count: 10, Seed: 7, Rules: []string{"942", "941100"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range sqli {
		if !strings.HasPrefix(e.Name, "942") && !strings.HasPrefix(e.Name, "941100-") {
			t.Errorf("rules 942, 941100: selected %s", e.Name)
		}
	}
}

func TestReadCRSErrors(t *testing.T) {
	tests := []struct {
		sel  CRSSelect
		want string
	}{
		{CRSSelect{Count: 0}, "select.count: want 1..255"},
		{CRSSelect{Count: 256}, "select.count: want 1..255"},
		{CRSSelect{Count: 1, Rules: []string{"94x"}}, `select.rules[0]: want a rule-ID prefix`},
		{CRSSelect{Count: 1, Rules: []string{"951"}}, "select.rules: no eligible test of rules 951"},
		{CRSSelect{Count: 255, Rules: []string{"913"}}, "select.count: want at most the"},
	}
	for _, tt := range tests {
		_, err := ReadCRS(tt.sel)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: got error %v, want one line containing %q", tt.sel, err, tt.want)
		}
	}
}

// TestCRSRequest: the request is crssuite.Build's, less Connection and
// Content-Length (load writes it); what load cannot send as written is
// excluded by name.
func TestCRSRequest(t *testing.T) {
	ptr := func(s string) *string { return &s }
	hs := func(kv ...string) []schema.HeaderTuple {
		var out []schema.HeaderTuple
		for i := 0; i < len(kv); i += 2 {
			out = append(out, schema.HeaderTuple{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	tests := []struct {
		name string
		in   schema.Input
		want Entry
		why  string
	}{
		{"form data", schema.Input{Method: ptr("POST"), URI: ptr("/p"), OrderedHeaders: hs("User-Agent", "a", "Host", "localhost"), Data: ptr("q=1 OR 1=1")},
			Entry{Name: "t", Method: "POST", Target: "/p", Headers: [][2]string{{"User-Agent", "a"}, {"Host", "localhost"}, {"Content-Type", "application/x-www-form-urlencoded"}},
				Body: []byte("q=1+OR+1%3D1")}, ""},
		{"post without data", schema.Input{Method: ptr("POST"), OrderedHeaders: hs("Host", "h")},
			Entry{Name: "t", Method: "POST", Target: "/", Headers: [][2]string{{"Host", "h"}}, Body: []byte{}}, ""},
		{"get, test's own keep-alive", schema.Input{OrderedHeaders: hs("Host", "h", "Connection", "keep-alive", "Proxy-Connection", "keep-alive")},
			Entry{Name: "t", Method: "GET", Target: "/", Headers: [][2]string{{"Host", "h"}, {"Proxy-Connection", "keep-alive"}}}, ""},
		{"HTTP/1.0", schema.Input{Version: ptr("HTTP/1.0"), OrderedHeaders: hs("Host", "h")}, Entry{}, exVersion},
		{"unknown method", schema.Input{Method: ptr("FOO"), OrderedHeaders: hs("Host", "h")}, Entry{}, exMethod},
		{"absolute form", schema.Input{URI: ptr("http://x/"), OrderedHeaders: hs("Host", "h")}, Entry{}, exTarget},
		{"no host", schema.Input{OrderedHeaders: hs("Accept", "*/*")}, Entry{}, exHost},
		{"two hosts", schema.Input{OrderedHeaders: hs("Host", "a", "Host", "b")}, Entry{}, exHost},
		{"chunked", schema.Input{OrderedHeaders: hs("Host", "h", "Transfer-Encoding", "chunked")}, Entry{}, exFraming},
		{"odd connection", schema.Input{OrderedHeaders: hs("Host", "h", "Connection", "close, close")}, Entry{}, exFraming},
		{"wrong length", schema.Input{Method: ptr("POST"), OrderedHeaders: hs("Host", "h", "Content-Length", "9"), Data: ptr("a=b")}, Entry{}, exFraming},
		{"referer with space", schema.Input{OrderedHeaders: hs("Host", "h", "Referer", "http://x/ a")}, Entry{}, exReferer},
		{"empty XML body", schema.Input{OrderedHeaders: hs("Host", "h", "Content-Type", "text/xml; x")}, Entry{}, exEmptyBody},
		{"encoded", schema.Input{EncodedRequest: "R0VUIC8gSFRUUC8xLjENCg0K"}, Entry{}, exEncoded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, why := crsRequest("t", &tt.in)
			if why != tt.why {
				t.Fatalf("excluded for %q, want %q", why, tt.why)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
