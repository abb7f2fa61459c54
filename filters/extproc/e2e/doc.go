// Package e2e holds the integration tests of wafbench-extproc (build tag
// integration): the real server binary behind the real Envoy, over the
// real CRS. It is a package of its own, not the command's: a test binary of
// a main package carries the command's dependency list, which lacks the
// CRS module that internal/crs checks before exporting the rules.
package e2e
