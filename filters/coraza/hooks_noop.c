/*
 * hooks_noop.c: event hooks that Envoy 1.40 resolves (or may resolve) but a
 * synchronous WAF does not use. They are plain C so that loading never fails
 * on a missing symbol, no Go call is paid for them, and const-qualified
 * parameters (which cgo exports cannot express) match the ABI exactly.
 */
#include "glue.h"

#define WB_UNUSED(x) (void)(x)

void envoy_dynamic_module_on_http_filter_http_callout_done(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t callout_id,
    envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header* headers,
    size_t headers_size, envoy_dynamic_module_type_envoy_buffer* body_chunks, size_t body_chunks_size) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(callout_id); WB_UNUSED(result);
  WB_UNUSED(headers); WB_UNUSED(headers_size); WB_UNUSED(body_chunks); WB_UNUSED(body_chunks_size);
}

void envoy_dynamic_module_on_http_filter_http_stream_headers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* headers, size_t headers_size, bool end_stream) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(headers); WB_UNUSED(headers_size); WB_UNUSED(end_stream);
}

void envoy_dynamic_module_on_http_filter_http_stream_data(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(data); WB_UNUSED(data_count); WB_UNUSED(end_stream);
}

void envoy_dynamic_module_on_http_filter_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* trailers, size_t trailers_size) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(trailers); WB_UNUSED(trailers_size);
}

void envoy_dynamic_module_on_http_filter_http_stream_complete(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(stream_id);
}

void envoy_dynamic_module_on_http_filter_http_stream_reset(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_http_stream_reset_reason reason) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(stream_id); WB_UNUSED(reason);
}

void envoy_dynamic_module_on_http_filter_scheduled(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                   envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                   uint64_t event_id) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(event_id);
}

void envoy_dynamic_module_on_http_filter_config_scheduled(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t event_id) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(event_id);
}

void envoy_dynamic_module_on_http_filter_config_http_callout_done(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t callout_id,
    envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header* headers,
    size_t headers_size, envoy_dynamic_module_type_envoy_buffer* body_chunks, size_t body_chunks_size) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(callout_id); WB_UNUSED(result);
  WB_UNUSED(headers); WB_UNUSED(headers_size); WB_UNUSED(body_chunks); WB_UNUSED(body_chunks_size);
}

void envoy_dynamic_module_on_http_filter_config_http_stream_headers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* headers, size_t headers_size, bool end_stream) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(headers); WB_UNUSED(headers_size); WB_UNUSED(end_stream);
}

void envoy_dynamic_module_on_http_filter_config_http_stream_data(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(data); WB_UNUSED(data_count); WB_UNUSED(end_stream);
}

void envoy_dynamic_module_on_http_filter_config_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* trailers, size_t trailers_size) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(stream_id);
  WB_UNUSED(trailers); WB_UNUSED(trailers_size);
}

void envoy_dynamic_module_on_http_filter_config_http_stream_complete(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(stream_id);
}

void envoy_dynamic_module_on_http_filter_config_http_stream_reset(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_http_stream_reset_reason reason) {
  WB_UNUSED(filter_config_envoy_ptr); WB_UNUSED(filter_config_ptr); WB_UNUSED(stream_id); WB_UNUSED(reason);
}

void envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr);
}

void envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr);
}

envoy_dynamic_module_type_on_http_filter_local_reply_status envoy_dynamic_module_on_http_filter_local_reply(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint32_t response_code,
    envoy_dynamic_module_type_envoy_buffer details, bool reset_imminent) {
  WB_UNUSED(filter_envoy_ptr); WB_UNUSED(filter_module_ptr); WB_UNUSED(response_code);
  WB_UNUSED(details); WB_UNUSED(reset_imminent);
  return envoy_dynamic_module_type_on_http_filter_local_reply_status_Continue;
}
