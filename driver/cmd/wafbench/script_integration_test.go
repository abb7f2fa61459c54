//go:build integration

package main

import (
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestScriptsIntegration runs the scripts that start the real Envoy and
// modules (testdata/script/integration).
func TestScriptsIntegration(t *testing.T) {
	testscript.Run(t, scriptParams("testdata/script/integration"))
}
