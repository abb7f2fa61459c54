/*
 * meter.c: the callgrind meter of `wafbench run --callgrind`, an Envoy
 * dynamic module that loads the real WAF module (WAFBENCH_METER_TARGET, an
 * absolute path) and forwards every event hook to it unchanged. While the
 * first byte of WAFBENCH_METER_FLAG (a file the driver writes) is '1', each
 * outermost hook call turns callgrind's collection off on its thread for its
 * duration (CALLGRIND_TOGGLE_COLLECT, a no-op outside valgrind), so a
 * measured window counts Envoy outside the module's hooks; the driver
 * subtracts that from the same number of requests counted with the flag '0'
 * to get the instructions inside the hooks, inclusive of everything they
 * call (engine, allocator, Envoy callbacks), on any stack (Go's cgo callbacks
 * switch stacks, which defeats callgrind's own call-graph attribution and
 * --toggle-collect). A hook called inside another (a local reply encodes
 * through the response hooks within request_headers) is counted once.
 *
 * Never loaded by a benchmark trial: only by run --callgrind, whose records
 * say so. Per hook call it adds a function-pointer call, two thread-local
 * reads and one byte read of the flag.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include "wafbench_abi.h"

/* The flag file's first byte, mapped shared; NULL when no flag is given. */
static const volatile char* meter_flag;
static __thread int meter_depth;  /* hook calls in progress on this thread */
static __thread int meter_paused; /* this thread's collection is off (inside an armed hook) */

static inline void meter_enter(void) {
  if (meter_depth++ == 0 && meter_flag != NULL && *meter_flag == '1') {
    CALLGRIND_TOGGLE_COLLECT;
    meter_paused = 1;
  }
}

static inline void meter_leave(void) {
  if (--meter_depth == 0 && meter_paused) {
    CALLGRIND_TOGGLE_COLLECT;
    meter_paused = 0;
  }
}

/* Every event hook of wafbench_abi.h but program_init:
 * X(return type, hook, parameters, arguments) or V(hook, parameters, arguments) for void. */
#define METER_HOOKS(X, V)                                                                                            \
  X(envoy_dynamic_module_type_http_filter_config_module_ptr, http_filter_config_new,                                 \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_envoy_buffer name, envoy_dynamic_module_type_envoy_buffer config),                    \
    (filter_config_envoy_ptr, name, config))                                                                         \
  V(http_filter_config_destroy, (envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr),         \
    (filter_config_ptr))                                                                                             \
  X(envoy_dynamic_module_type_http_filter_per_route_config_module_ptr, http_filter_per_route_config_new,             \
    (envoy_dynamic_module_type_envoy_buffer name, envoy_dynamic_module_type_envoy_buffer config), (name, config))    \
  V(http_filter_per_route_config_destroy,                                                                            \
    (envoy_dynamic_module_type_http_filter_per_route_config_module_ptr filter_config_ptr), (filter_config_ptr))      \
  X(envoy_dynamic_module_type_http_filter_module_ptr, http_filter_new,                                               \
    (envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr,                                      \
     envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr),                                              \
    (filter_config_ptr, filter_envoy_ptr))                                                                           \
  X(envoy_dynamic_module_type_on_http_filter_request_headers_status, http_filter_request_headers,                    \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream),                        \
    (filter_envoy_ptr, filter_module_ptr, end_of_stream))                                                            \
  X(envoy_dynamic_module_type_on_http_filter_request_body_status, http_filter_request_body,                          \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream),                        \
    (filter_envoy_ptr, filter_module_ptr, end_of_stream))                                                            \
  X(envoy_dynamic_module_type_on_http_filter_request_trailers_status, http_filter_request_trailers,                  \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr),                                            \
    (filter_envoy_ptr, filter_module_ptr))                                                                           \
  X(envoy_dynamic_module_type_on_http_filter_response_headers_status, http_filter_response_headers,                  \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream),                        \
    (filter_envoy_ptr, filter_module_ptr, end_of_stream))                                                            \
  X(envoy_dynamic_module_type_on_http_filter_response_body_status, http_filter_response_body,                        \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream),                        \
    (filter_envoy_ptr, filter_module_ptr, end_of_stream))                                                            \
  X(envoy_dynamic_module_type_on_http_filter_response_trailers_status, http_filter_response_trailers,                \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr),                                            \
    (filter_envoy_ptr, filter_module_ptr))                                                                           \
  V(http_filter_stream_complete,                                                                                     \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr),                                            \
    (filter_envoy_ptr, filter_module_ptr))                                                                           \
  V(http_filter_destroy, (envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr), (filter_module_ptr))  \
  V(http_filter_http_callout_done,                                                                                   \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t callout_id,                        \
     envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header * headers,    \
     size_t headers_size, envoy_dynamic_module_type_envoy_buffer * body_chunks, size_t body_chunks_size),            \
    (filter_envoy_ptr, filter_module_ptr, callout_id, result, headers, headers_size, body_chunks, body_chunks_size)) \
  V(http_filter_http_stream_headers,                                                                                 \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,                         \
     envoy_dynamic_module_type_envoy_http_header * headers, size_t headers_size, bool end_stream),                   \
    (filter_envoy_ptr, filter_module_ptr, stream_id, headers, headers_size, end_stream))                             \
  V(http_filter_http_stream_data,                                                                                    \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,                         \
     const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream),                        \
    (filter_envoy_ptr, filter_module_ptr, stream_id, data, data_count, end_stream))                                  \
  V(http_filter_http_stream_trailers,                                                                                \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,                         \
     envoy_dynamic_module_type_envoy_http_header * trailers, size_t trailers_size),                                  \
    (filter_envoy_ptr, filter_module_ptr, stream_id, trailers, trailers_size))                                       \
  V(http_filter_http_stream_complete,                                                                                \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id),                        \
    (filter_envoy_ptr, filter_module_ptr, stream_id))                                                                \
  V(http_filter_http_stream_reset,                                                                                   \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,                         \
     envoy_dynamic_module_type_http_stream_reset_reason reason),                                                     \
    (filter_envoy_ptr, filter_module_ptr, stream_id, reason))                                                        \
  V(http_filter_scheduled,                                                                                           \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t event_id),                         \
    (filter_envoy_ptr, filter_module_ptr, event_id))                                                                 \
  V(http_filter_config_scheduled,                                                                                    \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t event_id),                  \
    (filter_config_envoy_ptr, filter_config_ptr, event_id))                                                          \
  V(http_filter_config_http_callout_done,                                                                            \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t callout_id,                 \
     envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header * headers,    \
     size_t headers_size, envoy_dynamic_module_type_envoy_buffer * body_chunks, size_t body_chunks_size),            \
    (filter_config_envoy_ptr, filter_config_ptr, callout_id, result, headers, headers_size, body_chunks,             \
     body_chunks_size))                                                                                              \
  V(http_filter_config_http_stream_headers,                                                                          \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,                  \
     envoy_dynamic_module_type_envoy_http_header * headers, size_t headers_size, bool end_stream),                   \
    (filter_config_envoy_ptr, filter_config_ptr, stream_id, headers, headers_size, end_stream))                      \
  V(http_filter_config_http_stream_data,                                                                             \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,                  \
     const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream),                        \
    (filter_config_envoy_ptr, filter_config_ptr, stream_id, data, data_count, end_stream))                           \
  V(http_filter_config_http_stream_trailers,                                                                         \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,                  \
     envoy_dynamic_module_type_envoy_http_header * trailers, size_t trailers_size),                                  \
    (filter_config_envoy_ptr, filter_config_ptr, stream_id, trailers, trailers_size))                                \
  V(http_filter_config_http_stream_complete,                                                                         \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id),                 \
    (filter_config_envoy_ptr, filter_config_ptr, stream_id))                                                         \
  V(http_filter_config_http_stream_reset,                                                                            \
    (envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,                                 \
     envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,                  \
     envoy_dynamic_module_type_http_stream_reset_reason reason),                                                     \
    (filter_config_envoy_ptr, filter_config_ptr, stream_id, reason))                                                 \
  V(http_filter_downstream_above_write_buffer_high_watermark,                                                        \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr),                                            \
    (filter_envoy_ptr, filter_module_ptr))                                                                           \
  V(http_filter_downstream_below_write_buffer_low_watermark,                                                         \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr),                                            \
    (filter_envoy_ptr, filter_module_ptr))                                                                           \
  X(envoy_dynamic_module_type_on_http_filter_local_reply_status, http_filter_local_reply,                            \
    (envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,                                               \
     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint32_t response_code,                     \
     envoy_dynamic_module_type_envoy_buffer details, bool reset_imminent),                                           \
    (filter_envoy_ptr, filter_module_ptr, response_code, details, reset_imminent))

#define METER_POINTER(ret, hook, params, args) static ret(*hook##_fn) params;
#define METER_POINTER_VOID(hook, params, args) static void(*hook##_fn) params;
METER_HOOKS(METER_POINTER, METER_POINTER_VOID)

#define METER_FORWARD(ret, hook, params, args) \
  ret envoy_dynamic_module_on_##hook params {  \
    meter_enter();                             \
    ret r = hook##_fn args;                    \
    meter_leave();                             \
    return r;                                  \
  }
#define METER_FORWARD_VOID(hook, params, args) \
  void envoy_dynamic_module_on_##hook params { \
    meter_enter();                             \
    hook##_fn args;                            \
    meter_leave();                             \
  }
METER_HOOKS(METER_FORWARD, METER_FORWARD_VOID)

/* resolve sets every hook pointer from the target; 0 when one is missing. */
static int resolve(void* target) {
  void* sym;
#define METER_RESOLVE(ret, hook, params, args)                                                \
  if ((sym = dlsym(target, "envoy_dynamic_module_on_" #hook)) == NULL) {                      \
    fprintf(stderr, "wafbench meter: target exports no envoy_dynamic_module_on_" #hook "\n"); \
    return 0;                                                                                 \
  }                                                                                           \
  *(void**)(&hook##_fn) = sym;
#define METER_RESOLVE_VOID(hook, params, args) METER_RESOLVE(void, hook, params, args)
  METER_HOOKS(METER_RESOLVE, METER_RESOLVE_VOID)
  return 1;
}

/* mapFlag maps the first byte of the file at path (NULL on failure). */
static const volatile char* mapFlag(const char* path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return NULL;
  void* p = mmap(NULL, 1, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : (const volatile char*)p;
}

envoy_dynamic_module_type_abi_version_module_ptr envoy_dynamic_module_on_program_init(void) {
  const char* path = getenv("WAFBENCH_METER_TARGET");
  if (path == NULL || path[0] != '/') {
    fprintf(stderr, "wafbench meter: WAFBENCH_METER_TARGET must name the module to load by absolute path\n");
    return NULL;
  }
  /* Never closed: a Go module cannot be unloaded. */
  void* target = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (target == NULL) {
    fprintf(stderr, "wafbench meter: %s\n", dlerror());
    return NULL;
  }
  envoy_dynamic_module_type_abi_version_module_ptr (*init)(void);
  *(void**)(&init) = dlsym(target, "envoy_dynamic_module_on_program_init");
  if (init == NULL || !resolve(target)) return NULL;
  const char* flag = getenv("WAFBENCH_METER_FLAG");
  if (flag != NULL && flag[0] != '\0' && (meter_flag = mapFlag(flag)) == NULL) {
    fprintf(stderr, "wafbench meter: cannot map WAFBENCH_METER_FLAG %s\n", flag);
    return NULL;
  }
  return init();
}
