package main

import (
	"bytes"
	"encoding/json"
	"fmt"

	"wafbench/filters/coraza/engine"
)

// parseConfig decodes the filter_config JSON (the same shape the C++ module
// reads), rejecting unknown fields and trailing data.
func parseConfig(raw []byte) (engine.Config, error) {
	var c engine.Config
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("filter_config: %w", err)
	}
	if d.More() {
		return c, fmt.Errorf("filter_config: trailing data after the JSON object")
	}
	return c, c.Validate()
}
