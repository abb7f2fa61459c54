// Package bench measures the libmodsecurity engine in process, without Envoy,
// through the C API of filters/modsecurity (engine_c.h). It sits beside the
// Coraza engine benchmark so both engines are measured the same way.
//
// The cgo code needs build/filters/libwafbench_modsecurity_engine.a, so it is
// behind the build tag modsecurity_engine:
//
//	make -C filters/modsecurity
//	WAFBENCH_RULES=$PWD/build/crs/main.conf \
//	  go test -tags modsecurity_engine -bench . ./filters/modsecurity/bench
package bench
