/*
 * engine_tx_c.h: a transaction-level C API over the wafbench ModSecurity
 * engine wrapper (engine.h), for hosts other than Envoy's dynamic-module ABI:
 * the external-processing server (filters/extproc) drives one request through
 * the very Engine and Transaction methods module.cc calls, step by step.
 * Linked from the static library build/filters/libwafbench_modsecurity_engine.a.
 *
 * Strings are (pointer, length) pairs. Every step returns the verdict of
 * engine.h: 0 means "no intervention, continue", otherwise the HTTP status to
 * answer with. No function throws; a failure inside a step (an exception from
 * libmodsecurity or an allocation) marks the transaction as failed
 * (wafbench_msc_tx_engine_error) and every later step answers 500.
 */
#ifndef WAFBENCH_FILTERS_MODSECURITY_ENGINE_TX_C_H_
#define WAFBENCH_FILTERS_MODSECURITY_ENGINE_TX_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* wafbench_msc_waf is one filter configuration: its parsed filter_config and
 * its loaded rule set (opaque). */
typedef struct wafbench_msc_waf wafbench_msc_waf;

/* wafbench_msc_tx is one request's transaction (opaque). */
typedef struct wafbench_msc_tx wafbench_msc_tx;

/*
 * wafbench_msc_waf_new parses config (the filter_config JSON the Envoy module
 * receives, with the module's own parser) and loads its rules_file, as the
 * module's filter_config_new does. With match_log on, every rule match is
 * written to stderr as one "wafbench_modsecurity: wafbench-match ..." line;
 * otherwise rule matches are not formatted. On failure it returns NULL and
 * writes the module's one-line message into errbuf (if errbuf_len > 0).
 */
wafbench_msc_waf* wafbench_msc_waf_new(const char* config, size_t config_len, char* errbuf, size_t errbuf_len);

/* wafbench_msc_waf_free releases a configuration; NULL is allowed. Free its
 * transactions first. */
void wafbench_msc_waf_free(wafbench_msc_waf* waf);

/* wafbench_msc_waf_num_rules is the number of rules loaded over all phases. */
size_t wafbench_msc_waf_num_rules(const wafbench_msc_waf* waf);

/* wafbench_msc_waf_version is libmodsecurity's run-time version, e.g.
 * "3.0.9" (NUL-terminated, owned by waf). */
const char* wafbench_msc_waf_version(const wafbench_msc_waf* waf);

/* wafbench_msc_waf_max_body_bytes is the configuration's max_body_bytes. */
uint64_t wafbench_msc_waf_max_body_bytes(const wafbench_msc_waf* waf);

/* wafbench_msc_waf_inspect_response is the configuration's inspect_response
 * (1 or 0). */
int wafbench_msc_waf_inspect_response(const wafbench_msc_waf* waf);

/* wafbench_msc_tx_new starts a transaction; NULL when it cannot be created. */
wafbench_msc_tx* wafbench_msc_tx_new(wafbench_msc_waf* waf);

/* wafbench_msc_tx_free releases a transaction; NULL is allowed. */
void wafbench_msc_tx_free(wafbench_msc_tx* tx);

/* wafbench_msc_tx_connection records the client and server endpoints. */
int wafbench_msc_tx_connection(wafbench_msc_tx* tx, const char* client_ip, size_t client_ip_len, int client_port,
                               const char* server_ip, size_t server_ip_len, int server_port);

/* wafbench_msc_tx_uri records the request line; version is e.g. "1.1". */
int wafbench_msc_tx_uri(wafbench_msc_tx* tx, const char* uri, size_t uri_len, const char* method, size_t method_len,
                        const char* version, size_t version_len);

/* wafbench_msc_tx_add_header adds one request header (no pseudo-headers). */
void wafbench_msc_tx_add_header(wafbench_msc_tx* tx, const char* name, size_t name_len, const char* value,
                                size_t value_len);

/* wafbench_msc_tx_process_headers runs phase 1. */
int wafbench_msc_tx_process_headers(wafbench_msc_tx* tx);

/* wafbench_msc_tx_append_body feeds request-body bytes. */
int wafbench_msc_tx_append_body(wafbench_msc_tx* tx, const char* data, size_t len);

/* wafbench_msc_tx_process_body runs phase 2 (also for requests without a
 * body: CRS decides in phase 2). */
int wafbench_msc_tx_process_body(wafbench_msc_tx* tx);

/* wafbench_msc_tx_add_response_header adds one response header. */
void wafbench_msc_tx_add_response_header(wafbench_msc_tx* tx, const char* name, size_t name_len, const char* value,
                                         size_t value_len);

/* wafbench_msc_tx_process_response_headers runs phase 3; protocol is e.g.
 * "HTTP/1.1". */
int wafbench_msc_tx_process_response_headers(wafbench_msc_tx* tx, int status, const char* protocol,
                                             size_t protocol_len);

/* wafbench_msc_tx_process_response_body runs phase 4 (after phase 3). */
int wafbench_msc_tx_process_response_body(wafbench_msc_tx* tx);

/* wafbench_msc_tx_logging runs phase 5. */
void wafbench_msc_tx_logging(wafbench_msc_tx* tx);

/* wafbench_msc_tx_engine_error reports (1 or 0) whether a step of tx failed:
 * its 500 is an engine error, not a rule's verdict. */
int wafbench_msc_tx_engine_error(const wafbench_msc_tx* tx);

#ifdef __cplusplus
}
#endif

#endif /* WAFBENCH_FILTERS_MODSECURITY_ENGINE_TX_C_H_ */
