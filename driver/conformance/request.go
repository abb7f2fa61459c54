package conformance

import (
	schema "github.com/coreruleset/ftw-tests-schema/v2/types"

	"wafbench/driver/crssuite"
	"wafbench/internal/http1"
)

// request returns the bytes a stage sends and its method (for reading the
// response): crssuite.Build's request exactly as go-ftw writes it.
func request(in *schema.Input) (raw []byte, method string, err error) {
	r, err := crssuite.Build(in)
	if err != nil {
		return nil, "", err
	}
	return r.Raw(), r.Method, nil
}

// markerRequest is the request that logs marker through rule 999999
// (go-ftw's marker request: GET /status/200 with the marker header).
func markerRequest(marker string) []byte {
	return http1.AppendExact(nil, "GET", "/status/200", "HTTP/1.1", [][2]string{
		{"Accept", "*/*"}, {"User-Agent", "wafbench-crs-test"}, {"Host", "localhost"},
		{"X-CRS-Test", marker}, {"Connection", "close"}}, nil)
}
