/* glue.h: small C helpers for the wafbench Coraza module (cgo preamble). */
#ifndef WAFBENCH_CORAZA_GLUE_H_
#define WAFBENCH_CORAZA_GLUE_H_

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "wafbench_abi.h"

static inline envoy_dynamic_module_type_abi_version_module_ptr wb_abi_version(void) {
  return WAFBENCH_ENVOY_ABI_VERSION;
}

/* Handles travel through Envoy as opaque pointers; they are runtime/cgo
 * handle integers, never Go pointers. */
static inline const void* wb_handle_ptr(uintptr_t h) { return (const void*)h; }
static inline uintptr_t wb_ptr_handle(const void* p) { return (uintptr_t)p; }

/* Local-reply body (static storage, so no Go memory reaches C). */
static inline envoy_dynamic_module_type_module_buffer wb_blocked_body(void) {
  static const char s[] = "Request blocked by wafbench coraza\n";
  envoy_dynamic_module_type_module_buffer b = {s, sizeof(s) - 1};
  return b;
}

/* Local-reply details, Envoy's %RESPONSE_CODE_DETAILS%, by reason; the
 * indexes are the Go module's reply constants. */
static inline envoy_dynamic_module_type_module_buffer wb_reply_details(int reason) {
  static const char* const s[] = {
      "wafbench_coraza_phase1",         "wafbench_coraza_phase2",       "wafbench_coraza_response",
      "wafbench_coraza_body_too_large", "wafbench_coraza_engine_error",
  };
  if (reason < 0 || reason >= (int)(sizeof(s) / sizeof(s[0]))) reason = 4;
  envoy_dynamic_module_type_module_buffer b = {s[reason], strlen(s[reason])};
  return b;
}

/* The content-type header of every local reply. */
static inline envoy_dynamic_module_type_module_http_header* wb_reply_headers(void) {
  static envoy_dynamic_module_type_module_http_header h = {"content-type", 12, "text/plain", 10};
  return &h;
}

#endif
