//go:build wasip1

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// decodeStrict decodes one JSON object into v, rejecting unknown fields
// and trailing data, like the native module's filter_config.
func decodeStrict(raw []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("filter_config: %w", err)
	}
	if d.More() {
		return fmt.Errorf("filter_config: trailing data after the JSON object")
	}
	return nil
}
