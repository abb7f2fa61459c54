/*
 * wafbench_abi.h: the subset of the Envoy 1.40 dynamic-module ABI (ABI version
 * "v0.2.0") that the wafbench HTTP filter modules use.
 *
 * Attribution: these declarations follow Envoy's dynamic-module ABI, defined
 * by source/extensions/dynamic_modules/abi/abi.h in envoyproxy/envoy
 * (Apache-2.0): the names, types, enum values and signatures are Envoy's; the
 * text is this project's own, not a copy of that file (see NOTICE).
 *
 * Envoy resolves the event hooks below with dlsym and calls them with exactly
 * these signatures, so every prototype here must match Envoy's. Callbacks are
 * implemented by the Envoy binary; a module that references a callback the
 * binary does not export fails to load (RTLD_NOW). Check with
 *   nm -D --defined-only $ENVOY | grep envoy_dynamic_module_callback_http
 *
 * Plain C (C99) so that cgo can include it; also valid C++.
 */
#ifndef WAFBENCH_ABI_H_
#define WAFBENCH_ABI_H_

#ifdef __cplusplus
#include <cstddef>
#include <cstdint>
extern "C" {
#else
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#endif

/*
 * ABI version string returned by envoy_dynamic_module_on_program_init. Envoy
 * compares it with its own as a string and only logs the outcome ("matched",
 * else "deprecated" for any other value, v9.9.9 included); it calls the hooks
 * the same way either way. 1.40.0's own is "v0.2.0". The declarations below
 * were written from the newest public abi.h we could read (it still said
 * v0.1.0; the 1.40.0 tag's text was not available here) and checked against
 * the 1.40.0 binary: the 31 hook names it looks up are exactly the hooks
 * declared here, every callback used is exported by it (make check-exports,
 * make -C filters/coraza symbols), and tests/e2e exercises every hook and
 * callback the modules use through it. Re-check against the 1.40 header text
 * when it can be had.
 */
#define WAFBENCH_ENVOY_ABI_VERSION "v0.2.0"

/* ------------------------------------------------------------------------ */
/* Common types                                                             */
/* ------------------------------------------------------------------------ */

typedef const char* envoy_dynamic_module_type_abi_version_module_ptr;
typedef const char* envoy_dynamic_module_type_buffer_module_ptr;
typedef const char* envoy_dynamic_module_type_buffer_envoy_ptr;

/* Bytes owned by Envoy; valid until the current hook returns. */
typedef struct envoy_dynamic_module_type_envoy_buffer {
  envoy_dynamic_module_type_buffer_envoy_ptr ptr;
  size_t length;
} envoy_dynamic_module_type_envoy_buffer;

/* Bytes owned by the module. */
typedef struct envoy_dynamic_module_type_module_buffer {
  envoy_dynamic_module_type_buffer_module_ptr ptr;
  size_t length;
} envoy_dynamic_module_type_module_buffer;

/* Header pair owned by the module (used for local replies). */
typedef struct envoy_dynamic_module_type_module_http_header {
  envoy_dynamic_module_type_buffer_module_ptr key_ptr;
  size_t key_length;
  envoy_dynamic_module_type_buffer_module_ptr value_ptr;
  size_t value_length;
} envoy_dynamic_module_type_module_http_header;

/* Header pair owned by Envoy's header map. */
typedef struct envoy_dynamic_module_type_envoy_http_header {
  envoy_dynamic_module_type_buffer_envoy_ptr key_ptr;
  size_t key_length;
  envoy_dynamic_module_type_buffer_envoy_ptr value_ptr;
  size_t value_length;
} envoy_dynamic_module_type_envoy_http_header;

typedef enum envoy_dynamic_module_type_http_header_type {
  envoy_dynamic_module_type_http_header_type_RequestHeader,
  envoy_dynamic_module_type_http_header_type_RequestTrailer,
  envoy_dynamic_module_type_http_header_type_ResponseHeader,
  envoy_dynamic_module_type_http_header_type_ResponseTrailer,
} envoy_dynamic_module_type_http_header_type;

typedef enum envoy_dynamic_module_type_log_level {
  envoy_dynamic_module_type_log_level_Trace,
  envoy_dynamic_module_type_log_level_Debug,
  envoy_dynamic_module_type_log_level_Info,
  envoy_dynamic_module_type_log_level_Warn,
  envoy_dynamic_module_type_log_level_Error,
  envoy_dynamic_module_type_log_level_Critical,
  envoy_dynamic_module_type_log_level_Off,
} envoy_dynamic_module_type_log_level;

typedef enum envoy_dynamic_module_type_http_callout_init_result {
  envoy_dynamic_module_type_http_callout_init_result_Success,
  envoy_dynamic_module_type_http_callout_init_result_MissingRequiredHeaders,
  envoy_dynamic_module_type_http_callout_init_result_ClusterNotFound,
  envoy_dynamic_module_type_http_callout_init_result_DuplicateCalloutId,
  envoy_dynamic_module_type_http_callout_init_result_CannotCreateRequest,
} envoy_dynamic_module_type_http_callout_init_result;

typedef enum envoy_dynamic_module_type_http_callout_result {
  envoy_dynamic_module_type_http_callout_result_Success,
  envoy_dynamic_module_type_http_callout_result_Reset,
  envoy_dynamic_module_type_http_callout_result_ExceedResponseBufferLimit,
} envoy_dynamic_module_type_http_callout_result;

/* Reset reason of a module-initiated HTTP stream (callout streams). */
typedef enum envoy_dynamic_module_type_http_stream_reset_reason {
  envoy_dynamic_module_type_http_stream_reset_reason_ConnectionFailure,
  envoy_dynamic_module_type_http_stream_reset_reason_ConnectionTermination,
  envoy_dynamic_module_type_http_stream_reset_reason_LocalReset,
  envoy_dynamic_module_type_http_stream_reset_reason_LocalRefusedStreamReset,
  envoy_dynamic_module_type_http_stream_reset_reason_Overflow,
  envoy_dynamic_module_type_http_stream_reset_reason_RemoteReset,
  envoy_dynamic_module_type_http_stream_reset_reason_RemoteRefusedStreamReset,
  envoy_dynamic_module_type_http_stream_reset_reason_ProtocolError,
} envoy_dynamic_module_type_http_stream_reset_reason;

typedef enum envoy_dynamic_module_type_metrics_result {
  envoy_dynamic_module_type_metrics_result_Success,
  envoy_dynamic_module_type_metrics_result_MetricNotFound,
  envoy_dynamic_module_type_metrics_result_InvalidLabels,
  envoy_dynamic_module_type_metrics_result_Frozen,
} envoy_dynamic_module_type_metrics_result;

/*
 * Attribute ids (Envoy "attributes" vocabulary). The full list is declared so
 * that the numeric values of the ids we use stay correct; order matters.
 */
typedef enum envoy_dynamic_module_type_attribute_id {
  envoy_dynamic_module_type_attribute_id_RequestPath,
  envoy_dynamic_module_type_attribute_id_RequestUrlPath,
  envoy_dynamic_module_type_attribute_id_RequestHost,
  envoy_dynamic_module_type_attribute_id_RequestScheme,
  envoy_dynamic_module_type_attribute_id_RequestMethod,
  envoy_dynamic_module_type_attribute_id_RequestHeaders,
  envoy_dynamic_module_type_attribute_id_RequestReferer,
  envoy_dynamic_module_type_attribute_id_RequestUserAgent,
  envoy_dynamic_module_type_attribute_id_RequestTime,
  envoy_dynamic_module_type_attribute_id_RequestId,
  envoy_dynamic_module_type_attribute_id_RequestProtocol,
  envoy_dynamic_module_type_attribute_id_RequestQuery,
  envoy_dynamic_module_type_attribute_id_RequestDuration,
  envoy_dynamic_module_type_attribute_id_RequestSize,
  envoy_dynamic_module_type_attribute_id_RequestTotalSize,
  envoy_dynamic_module_type_attribute_id_ResponseCode,
  envoy_dynamic_module_type_attribute_id_ResponseCodeDetails,
  envoy_dynamic_module_type_attribute_id_ResponseFlags,
  envoy_dynamic_module_type_attribute_id_ResponseGrpcStatus,
  envoy_dynamic_module_type_attribute_id_ResponseHeaders,
  envoy_dynamic_module_type_attribute_id_ResponseTrailers,
  envoy_dynamic_module_type_attribute_id_ResponseSize,
  envoy_dynamic_module_type_attribute_id_ResponseTotalSize,
  envoy_dynamic_module_type_attribute_id_ResponseBackendLatency,
  envoy_dynamic_module_type_attribute_id_SourceAddress,
  envoy_dynamic_module_type_attribute_id_SourcePort,
  envoy_dynamic_module_type_attribute_id_DestinationAddress,
  envoy_dynamic_module_type_attribute_id_DestinationPort,
  envoy_dynamic_module_type_attribute_id_ConnectionId,
  envoy_dynamic_module_type_attribute_id_ConnectionMtls,
  envoy_dynamic_module_type_attribute_id_ConnectionRequestedServerName,
  envoy_dynamic_module_type_attribute_id_ConnectionTlsVersion,
  envoy_dynamic_module_type_attribute_id_ConnectionSubjectLocalCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionSubjectPeerCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionDnsSanLocalCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionDnsSanPeerCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionUriSanLocalCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionUriSanPeerCertificate,
  envoy_dynamic_module_type_attribute_id_ConnectionSha256PeerCertificateDigest,
  envoy_dynamic_module_type_attribute_id_ConnectionTransportFailureReason,
  envoy_dynamic_module_type_attribute_id_ConnectionTerminationDetails,
  envoy_dynamic_module_type_attribute_id_UpstreamAddress,
  envoy_dynamic_module_type_attribute_id_UpstreamPort,
  envoy_dynamic_module_type_attribute_id_UpstreamTlsVersion,
  envoy_dynamic_module_type_attribute_id_UpstreamSubjectLocalCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamSubjectPeerCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamDnsSanLocalCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamDnsSanPeerCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamUriSanLocalCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamUriSanPeerCertificate,
  envoy_dynamic_module_type_attribute_id_UpstreamSha256PeerCertificateDigest,
  envoy_dynamic_module_type_attribute_id_UpstreamLocalAddress,
  envoy_dynamic_module_type_attribute_id_UpstreamTransportFailureReason,
  envoy_dynamic_module_type_attribute_id_UpstreamRequestAttemptCount,
  envoy_dynamic_module_type_attribute_id_UpstreamCxPoolReadyDuration,
  envoy_dynamic_module_type_attribute_id_UpstreamLocality,
  envoy_dynamic_module_type_attribute_id_XdsNode,
  envoy_dynamic_module_type_attribute_id_XdsClusterName,
  envoy_dynamic_module_type_attribute_id_XdsClusterMetadata,
  envoy_dynamic_module_type_attribute_id_XdsListenerDirection,
  envoy_dynamic_module_type_attribute_id_XdsListenerMetadata,
  envoy_dynamic_module_type_attribute_id_XdsRouteName,
  envoy_dynamic_module_type_attribute_id_XdsRouteMetadata,
  envoy_dynamic_module_type_attribute_id_XdsVirtualHostName,
  envoy_dynamic_module_type_attribute_id_XdsVirtualHostMetadata,
  envoy_dynamic_module_type_attribute_id_XdsUpstreamHostMetadata,
  envoy_dynamic_module_type_attribute_id_XdsFilterChainName,
  envoy_dynamic_module_type_attribute_id_HealthCheck,
} envoy_dynamic_module_type_attribute_id;

/* ------------------------------------------------------------------------ */
/* HTTP filter types                                                        */
/* ------------------------------------------------------------------------ */

/* Envoy-side objects (opaque to the module). */
typedef void* envoy_dynamic_module_type_http_filter_config_envoy_ptr;
typedef void* envoy_dynamic_module_type_http_filter_envoy_ptr;
/* Module-side objects (opaque to Envoy). */
typedef const void* envoy_dynamic_module_type_http_filter_config_module_ptr;
typedef const void* envoy_dynamic_module_type_http_filter_per_route_config_module_ptr;
typedef const void* envoy_dynamic_module_type_http_filter_module_ptr;

typedef enum envoy_dynamic_module_type_http_body_type {
  envoy_dynamic_module_type_http_body_type_ReceivedRequestBody,
  envoy_dynamic_module_type_http_body_type_BufferedRequestBody,
  envoy_dynamic_module_type_http_body_type_ReceivedResponseBody,
  envoy_dynamic_module_type_http_body_type_BufferedResponseBody,
} envoy_dynamic_module_type_http_body_type;

/* Mirrors Envoy's FilterHeadersStatus. */
typedef enum envoy_dynamic_module_type_on_http_filter_request_headers_status {
  envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue,
  envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration,
  envoy_dynamic_module_type_on_http_filter_request_headers_status_ContinueAndDontEndStream,
  envoy_dynamic_module_type_on_http_filter_request_headers_status_StopAllIterationAndBuffer,
  envoy_dynamic_module_type_on_http_filter_request_headers_status_StopAllIterationAndWatermark,
} envoy_dynamic_module_type_on_http_filter_request_headers_status;

/* Mirrors Envoy's FilterDataStatus. */
typedef enum envoy_dynamic_module_type_on_http_filter_request_body_status {
  envoy_dynamic_module_type_on_http_filter_request_body_status_Continue,
  envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndBuffer,
  envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndWatermark,
  envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer,
} envoy_dynamic_module_type_on_http_filter_request_body_status;

/* Mirrors Envoy's FilterTrailersStatus. */
typedef enum envoy_dynamic_module_type_on_http_filter_request_trailers_status {
  envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue,
  envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration,
} envoy_dynamic_module_type_on_http_filter_request_trailers_status;

typedef enum envoy_dynamic_module_type_on_http_filter_response_headers_status {
  envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue,
  envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration,
  envoy_dynamic_module_type_on_http_filter_response_headers_status_ContinueAndDontEndStream,
  envoy_dynamic_module_type_on_http_filter_response_headers_status_StopAllIterationAndBuffer,
  envoy_dynamic_module_type_on_http_filter_response_headers_status_StopAllIterationAndWatermark,
} envoy_dynamic_module_type_on_http_filter_response_headers_status;

typedef enum envoy_dynamic_module_type_on_http_filter_response_body_status {
  envoy_dynamic_module_type_on_http_filter_response_body_status_Continue,
  envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationAndBuffer,
  envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationAndWatermark,
  envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationNoBuffer,
} envoy_dynamic_module_type_on_http_filter_response_body_status;

typedef enum envoy_dynamic_module_type_on_http_filter_response_trailers_status {
  envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue,
  envoy_dynamic_module_type_on_http_filter_response_trailers_status_StopIteration,
} envoy_dynamic_module_type_on_http_filter_response_trailers_status;

/* Mirrors Envoy's LocalErrorStatus. */
typedef enum envoy_dynamic_module_type_on_http_filter_local_reply_status {
  envoy_dynamic_module_type_on_http_filter_local_reply_status_Continue,
  envoy_dynamic_module_type_on_http_filter_local_reply_status_ContinueAndResetStream,
} envoy_dynamic_module_type_on_http_filter_local_reply_status;

/* ------------------------------------------------------------------------ */
/* Event hooks: implemented and exported by the module                      */
/* ------------------------------------------------------------------------ */

/* Called once after dlopen; returns the ABI version string, NULL = refuse. */
envoy_dynamic_module_type_abi_version_module_ptr envoy_dynamic_module_on_program_init(void);

/* Main thread. config is the filter_config bytes; NULL return rejects it. */
envoy_dynamic_module_type_http_filter_config_module_ptr envoy_dynamic_module_on_http_filter_config_new(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_envoy_buffer name, envoy_dynamic_module_type_envoy_buffer config);

void envoy_dynamic_module_on_http_filter_config_destroy(
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr);

envoy_dynamic_module_type_http_filter_per_route_config_module_ptr
envoy_dynamic_module_on_http_filter_per_route_config_new(envoy_dynamic_module_type_envoy_buffer name,
                                                         envoy_dynamic_module_type_envoy_buffer config);

void envoy_dynamic_module_on_http_filter_per_route_config_destroy(
    envoy_dynamic_module_type_http_filter_per_route_config_module_ptr filter_config_ptr);

/* Per stream. NULL return closes the stream. */
envoy_dynamic_module_type_http_filter_module_ptr envoy_dynamic_module_on_http_filter_new(
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr,
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);

envoy_dynamic_module_type_on_http_filter_request_headers_status envoy_dynamic_module_on_http_filter_request_headers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream);

envoy_dynamic_module_type_on_http_filter_request_body_status envoy_dynamic_module_on_http_filter_request_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream);

envoy_dynamic_module_type_on_http_filter_request_trailers_status envoy_dynamic_module_on_http_filter_request_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

envoy_dynamic_module_type_on_http_filter_response_headers_status envoy_dynamic_module_on_http_filter_response_headers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream);

envoy_dynamic_module_type_on_http_filter_response_body_status envoy_dynamic_module_on_http_filter_response_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, bool end_of_stream);

envoy_dynamic_module_type_on_http_filter_response_trailers_status envoy_dynamic_module_on_http_filter_response_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

/* Before destroy and before access logs are flushed. */
void envoy_dynamic_module_on_http_filter_stream_complete(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

void envoy_dynamic_module_on_http_filter_destroy(envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

void envoy_dynamic_module_on_http_filter_http_callout_done(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t callout_id,
    envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header* headers,
    size_t headers_size, envoy_dynamic_module_type_envoy_buffer* body_chunks, size_t body_chunks_size);

void envoy_dynamic_module_on_http_filter_http_stream_headers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* headers, size_t headers_size, bool end_stream);

void envoy_dynamic_module_on_http_filter_http_stream_data(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream);

void envoy_dynamic_module_on_http_filter_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* trailers, size_t trailers_size);

void envoy_dynamic_module_on_http_filter_http_stream_complete(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id);

void envoy_dynamic_module_on_http_filter_http_stream_reset(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_http_stream_reset_reason reason);

void envoy_dynamic_module_on_http_filter_scheduled(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                   envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                   uint64_t event_id);

void envoy_dynamic_module_on_http_filter_config_scheduled(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t event_id);

void envoy_dynamic_module_on_http_filter_config_http_callout_done(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t callout_id,
    envoy_dynamic_module_type_http_callout_result result, envoy_dynamic_module_type_envoy_http_header* headers,
    size_t headers_size, envoy_dynamic_module_type_envoy_buffer* body_chunks, size_t body_chunks_size);

void envoy_dynamic_module_on_http_filter_config_http_stream_headers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* headers, size_t headers_size, bool end_stream);

void envoy_dynamic_module_on_http_filter_config_http_stream_data(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    const envoy_dynamic_module_type_envoy_buffer* data, size_t data_count, bool end_stream);

void envoy_dynamic_module_on_http_filter_config_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_envoy_http_header* trailers, size_t trailers_size);

void envoy_dynamic_module_on_http_filter_config_http_stream_complete(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id);

void envoy_dynamic_module_on_http_filter_config_http_stream_reset(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr, uint64_t stream_id,
    envoy_dynamic_module_type_http_stream_reset_reason reason);

void envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

void envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr);

/* Notified when a local reply is generated on the stream (by anyone). */
envoy_dynamic_module_type_on_http_filter_local_reply_status envoy_dynamic_module_on_http_filter_local_reply(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr, uint32_t response_code,
    envoy_dynamic_module_type_envoy_buffer details, bool reset_imminent);

/* ------------------------------------------------------------------------ */
/* Callbacks: implemented by Envoy, called by the module                    */
/* ------------------------------------------------------------------------ */

/* Logging under Envoy's "dynamic_modules" logger id. */
void envoy_dynamic_module_callback_log(envoy_dynamic_module_type_log_level level,
                                       envoy_dynamic_module_type_module_buffer message);
bool envoy_dynamic_module_callback_log_enabled(envoy_dynamic_module_type_log_level level);

/* Metrics: define in config_new (main thread), use per stream by id. */
envoy_dynamic_module_type_metrics_result envoy_dynamic_module_callback_http_filter_config_define_counter(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_module_buffer name, envoy_dynamic_module_type_module_buffer* label_names,
    size_t label_names_length, size_t* counter_id_ptr);

envoy_dynamic_module_type_metrics_result envoy_dynamic_module_callback_http_filter_increment_counter(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr, size_t id,
    envoy_dynamic_module_type_module_buffer* label_values, size_t label_values_length, uint64_t value);

envoy_dynamic_module_type_metrics_result envoy_dynamic_module_callback_http_filter_config_increment_counter(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr, size_t id,
    envoy_dynamic_module_type_module_buffer* label_values, size_t label_values_length, uint64_t value);

/* Headers. get_headers needs an array of get_headers_size entries. */
bool envoy_dynamic_module_callback_http_get_header(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                   envoy_dynamic_module_type_http_header_type header_type,
                                                   envoy_dynamic_module_type_module_buffer key,
                                                   envoy_dynamic_module_type_envoy_buffer* result_buffer, size_t index,
                                                   size_t* optional_size);

size_t envoy_dynamic_module_callback_http_get_headers_size(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_header_type header_type);

bool envoy_dynamic_module_callback_http_get_headers(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                    envoy_dynamic_module_type_http_header_type header_type,
                                                    envoy_dynamic_module_type_envoy_http_header* result_headers);

bool envoy_dynamic_module_callback_http_set_header(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                   envoy_dynamic_module_type_http_header_type header_type,
                                                   envoy_dynamic_module_type_module_buffer key,
                                                   envoy_dynamic_module_type_module_buffer value);

/* Local reply. details may be empty. */
void envoy_dynamic_module_callback_http_send_response(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                      uint32_t status_code,
                                                      envoy_dynamic_module_type_module_http_header* headers_vector,
                                                      size_t headers_vector_size,
                                                      envoy_dynamic_module_type_module_buffer body,
                                                      envoy_dynamic_module_type_module_buffer details);

/* Body: "received" = latest chunk (body hooks only), "buffered" = accumulated. */
size_t envoy_dynamic_module_callback_http_get_body_size(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_body_type body_type);

bool envoy_dynamic_module_callback_http_get_body_chunks(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_body_type body_type, envoy_dynamic_module_type_envoy_buffer* result_buffer_vector);

size_t envoy_dynamic_module_callback_http_get_body_chunks_size(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_http_body_type body_type);

/* True when the latest received body is a previous filter's buffered body. */
bool envoy_dynamic_module_callback_http_received_buffered_request_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);
bool envoy_dynamic_module_callback_http_received_buffered_response_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);

/* Attributes. In 1.40 source/destination.address include ":port". */
bool envoy_dynamic_module_callback_http_filter_get_attribute_string(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_attribute_id attribute_id, envoy_dynamic_module_type_envoy_buffer* result);

bool envoy_dynamic_module_callback_http_filter_get_attribute_int(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
    envoy_dynamic_module_type_attribute_id attribute_id, uint64_t* result);

/* Resume a stream stopped earlier (not needed by synchronous filters). */
void envoy_dynamic_module_callback_http_filter_continue_decoding(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);
void envoy_dynamic_module_callback_http_filter_continue_encoding(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);

/* Body buffering limit (bytes; 0 = unlimited). */
uint64_t envoy_dynamic_module_callback_http_get_buffer_limit(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr);
void envoy_dynamic_module_callback_http_set_buffer_limit(
    envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr, uint64_t limit);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* WAFBENCH_ABI_H_ */
