//go:build wasip1 && wafbench_testpanic

package main

// testPanicHeader names the request header whose value ("headers", "body"
// or "logging") makes that callback panic. Test builds only (tag
// wafbench_testpanic): the e2e tests use it to prove that a panic fails the
// request closed instead of failing the VM.
const testPanicHeader = "x-wafbench-test-panic"
