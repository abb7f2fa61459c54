// Command coraza is wafbench's Envoy 1.40 dynamic module wrapping Coraza v3.
// Build it with -buildmode=c-shared (see README.md); Envoy loads it as
// libwafbench_coraza.so. The Envoy glue lives here; the engine and the
// request mapping live in package engine.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../abi -O2 -Wall -Wextra
// The envoy_dynamic_module_callback_* symbols are resolved against the Envoy
// executable at dlopen time. Ignoring them at link time also lets a plain
// `go build ./...` link this package (the result is not runnable).
#cgo LDFLAGS: -Wl,--unresolved-symbols=ignore-all
*/
import "C"

func main() {}
