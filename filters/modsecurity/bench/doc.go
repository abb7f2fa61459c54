// Package bench measures the libmodsecurity engine in process, without Envoy,
// through the C API of filters/modsecurity (engine_c.h). It sits beside the
// Coraza engine benchmark so both engines are measured the same way.
//
// The cgo code needs build/filters/libwafbench_modsecurity_engine.a, so it is
// behind the build tag modsecurity_engine (its tests, in the integration
// tier, also need integration):
//
//	make -C filters/modsecurity
//	WAFBENCH_RULES=$PWD/build/crs/main.conf \
//	  go test -tags integration,modsecurity_engine -bench . ./filters/modsecurity/bench
//
// Allocator: inside Envoy, libmodsecurity's malloc/free are the tcmalloc
// that Envoy's executable exports; here they are glibc's unless tcmalloc is
// preloaded (LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4,
// as scripts/overhead.sh does). On CRS that changes the engine's
// instruction count by about −20%, so say which allocator a figure used.
package bench
