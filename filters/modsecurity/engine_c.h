/*
 * engine_c.h: a C API over the wafbench ModSecurity engine wrapper, for the
 * in-process Go benchmark (filters/modsecurity/bench). Linked from the static
 * library build/filters/libwafbench_modsecurity_engine.a.
 *
 * All strings are (pointer, length) pairs so that callers can pass memory
 * they already own without copying or NUL-terminating it.
 */
#ifndef WAFBENCH_FILTERS_MODSECURITY_ENGINE_C_H_
#define WAFBENCH_FILTERS_MODSECURITY_ENGINE_C_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* wafbench_msc_engine is one loaded rule set (opaque). */
typedef struct wafbench_msc_engine wafbench_msc_engine;

/*
 * wafbench_msc_engine_new loads rules_file (NUL-terminated path). On failure
 * it returns NULL and writes a NUL-terminated message into errbuf (if
 * errbuf_len > 0).
 */
wafbench_msc_engine* wafbench_msc_engine_new(const char* rules_file, char* errbuf, size_t errbuf_len);

/*
 * wafbench_msc_engine_evaluate runs one request through phases 1, 2 and
 * logging. headers holds "Name: value" lines separated by "\n" (a trailing
 * "\r" on a line is ignored). Returns 200 when allowed, the intervention
 * status when blocked, 500 on an engine error, -1 on invalid arguments.
 */
int wafbench_msc_engine_evaluate(wafbench_msc_engine* engine, const char* method, size_t method_len, const char* uri,
                                 size_t uri_len, const char* headers, size_t headers_len, const char* body,
                                 size_t body_len);

/* wafbench_msc_engine_free releases an engine; NULL is allowed. */
void wafbench_msc_engine_free(wafbench_msc_engine* engine);

#ifdef __cplusplus
}
#endif

#endif /* WAFBENCH_FILTERS_MODSECURITY_ENGINE_C_H_ */
