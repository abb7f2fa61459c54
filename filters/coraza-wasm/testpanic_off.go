//go:build wasip1 && !wafbench_testpanic

package main

// testPanicHeader is empty in every real build: no request can make a
// callback panic (see testpanic.go).
const testPanicHeader = ""
