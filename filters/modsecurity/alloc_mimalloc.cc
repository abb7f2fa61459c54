// Private allocator of a modsecurity build whose recipe names one
// (filters/builds.yaml, allocator:; compiled only with MIMALLOC_SRC set).
//
// Every C++ allocation behind the module's hooks (module, libmodsecurity and
// the static libstdc++ the module then links) goes to a mimalloc of its own
// instead of Envoy's tcmalloc, which on these machines runs without per-CPU
// caches (results/README.md, "The allocator, explained"). malloc/free stay
// Envoy's: glibc, PCRE2, YAJL and libxml2 allocate through them and
// ModSecurity frees such memory with free(), so only operator new/delete may
// change hands, and all of them at once.
//
// mimalloc's own header defines the replacement operators (all of them,
// sized and aligned too); it must be included by exactly one file.
#include <mimalloc-new-delete.h>
