package report

import (
	"testing"

	"wafbench/driver/protection"
)

// A kept run keeps what "Protection as deployed" reads: protection-deployed.json
// is no by-product (a kept configurations run once lost the section to the
// archive).
func TestDeployedNotByproduct(t *testing.T) {
	if kind := Byproduct(protection.File); kind != "" {
		t.Errorf("%s is a by-product (%s); the report reads it", protection.File, kind)
	}
}
