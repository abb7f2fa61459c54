// The ctype functions libmodsecurity calls, defined by the module itself for a
// modsecurity build whose recipe says `ctype: inline` (filters/builds.yaml;
// compiled only with CTYPE_INLINE=1).
//
// glibc's are out-of-line calls through the PLT that read a per-thread locale
// table: tolower alone took 5.9% of Envoy's CPU samples on json_4k in a
// 3.0.14-pgo build (perf, cpu-clock), called once per byte by the
// transformations and by @pm's case-folding. Defined here, the linker binds
// libmodsecurity's calls to these (exports.map keeps them local) and ThinLTO
// inlines them.
//
// Meaning: glibc's in the "C" locale (ctype_test.cc compares every byte), which is also theirs for single bytes in
// every UTF-8 locale (a byte ≥ 0x80 is no letter, digit or space there); the
// module would differ only under a single-byte locale such as Latin-1, which
// Envoy never sets. The is* functions return 1 rather than glibc's mask bit;
// libmodsecurity only tests them for truth. No header is included: glibc's
// <ctype.h> declares these with inline bodies of its own.

extern "C" {

// A negative char other than EOF comes back as its unsigned value, as from
// glibc's tables (tolower(-128) == 128).
static inline int Unsigned(int c) { return c >= -128 && c < -1 ? c + 256 : c; }

int tolower(int c) { return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : Unsigned(c); }

int toupper(int c) { return c >= 'a' && c <= 'z' ? c - ('a' - 'A') : Unsigned(c); }

int isspace(int c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

int isxdigit(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

int isalnum(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

}  // extern "C"
