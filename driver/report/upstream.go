package report

import "wafbench/driver/upstream"

// upstreamName says which upstream server a run put behind every mode, from
// meta.json's upstream field; runs from before the field used the harness's
// own.
func upstreamName(metaUpstream string) string {
	switch metaUpstream {
	case "", string(upstream.Own):
		return "wafbench (the harness's own: keep-alive HTTP/1.1, fixed 200 \"ok\")"
	}
	return metaUpstream + " (every path served by its /anything handler: a JSON echo of the request)"
}
