package envoy

import (
	"encoding/json"
	"fmt"
)

// ParseStats reads an admin /stats?format=json document (Process.Stats)
// into name → value for every stat whose value is an integer: counters and
// gauges. Histograms, whose values are objects, are left out.
func ParseStats(b []byte) (map[string]int64, error) {
	var doc struct {
		Stats []struct {
			Name  string          `json:"name"`
			Value json.RawMessage `json:"value"`
		} `json:"stats"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("admin /stats: %w", err)
	}
	out := make(map[string]int64, len(doc.Stats))
	for _, s := range doc.Stats {
		var v int64
		if s.Name != "" && json.Unmarshal(s.Value, &v) == nil {
			out[s.Name] = v
		}
	}
	return out, nil
}
