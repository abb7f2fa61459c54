package engine

import "testing"

// BenchmarkEngine measures one whole request (phases 1, 2 and 5) against the
// real CRS, in-process. Names: BenchmarkEngine/coraza/<workload>.
func BenchmarkEngine(b *testing.B) {
	w := loadCRS(b)
	for _, bc := range []struct {
		name string
		req  Request
		want int
	}{
		{"headers", Request{Method: "GET", Path: "/safe", Headers: withHeaders()}, 200},
		{"json_4k", Request{Method: "POST", Path: "/json", Body: jsonBody(4096),
			Headers: withHeaders([2]string{"Content-Type", "application/json"})}, 200},
		{"blocked_sqli", Request{Method: "POST", Path: "/attack", Body: []byte("user=1234+OR+1%3D1"),
			Headers: withHeaders([2]string{"Content-Type", "application/x-www-form-urlencoded"})}, 403},
	} {
		b.Run("coraza/"+bc.name, func(b *testing.B) {
			if got := w.Evaluate(bc.req).Status; got != bc.want {
				b.Fatalf("status: got %d, want %d", got, bc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				w.Evaluate(bc.req)
			}
		})
	}
}
