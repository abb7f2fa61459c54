package profile

import (
	"strconv"
	"strings"
	"testing"
)

// TestRequest: a workload is serialized with Host first, its other headers
// in file order, and its body framed by Content-Length.
func TestRequest(t *testing.T) {
	set, err := LoadDir("../../profiles")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"json_4k", "phase1_block"} {
		t.Run(name, func(t *testing.T) {
			w := set.Workloads[name]
			if w == nil {
				t.Fatalf("no workload %s in profiles/", name)
			}
			r := set.Request(w)
			head, body, ok := strings.Cut(string(r.Raw), "\r\n\r\n")
			if !ok || r.Name != name || r.ExpectStatus != 200 {
				t.Fatalf("got name %q expect %d head-complete %v", r.Name, r.ExpectStatus, ok)
			}
			lines := strings.Split(head, "\r\n")
			if want := w.Method + " " + w.FullPath() + " HTTP/1.1"; lines[0] != want {
				t.Errorf("request line: got %q, want %q", lines[0], want)
			}
			if !strings.HasPrefix(lines[1], "Host: ") {
				t.Errorf("second line: got %q, want Host first", lines[1])
			}
			if b := w.BodyBytes(); b != nil {
				if body != string(b) || !strings.Contains(head, "\r\nContent-Length: "+strconv.Itoa(len(b))) {
					t.Errorf("body of %d bytes not framed by Content-Length: head %q", len(b), head)
				}
			}
		})
	}
}
