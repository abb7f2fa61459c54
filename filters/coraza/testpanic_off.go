//go:build !wafbench_testpanic

package main

// testPanicHeader is empty in every real build: no request can make a hook
// panic (see testpanic.go).
const testPanicHeader = ""
