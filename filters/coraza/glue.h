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

/* Local-reply body and details (static storage, so no Go memory reaches C). */
static inline envoy_dynamic_module_type_module_buffer wb_blocked_body(void) {
  static const char s[] = "Request blocked by wafbench coraza\n";
  envoy_dynamic_module_type_module_buffer b = {s, sizeof(s) - 1};
  return b;
}
static inline envoy_dynamic_module_type_module_buffer wb_blocked_details(void) {
  static const char s[] = "wafbench_coraza_blocked";
  envoy_dynamic_module_type_module_buffer b = {s, sizeof(s) - 1};
  return b;
}

#endif
