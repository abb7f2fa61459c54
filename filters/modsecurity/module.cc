// Envoy dynamic-module glue for the wafbench ModSecurity HTTP filter. All
// inspection logic lives in engine.h; this file maps Envoy 1.40's ABI hooks
// onto it. Only the envoy_dynamic_module_on_* hooks are exported.
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "engine.h"
#include "wafbench_abi.h"

#define WAFBENCH_EXPORT extern "C" __attribute__((visibility("default")))

// The mode name of this build (contract: "modsecurity" for the default
// build, "modsecurity@<build>" otherwise), set by the build recipe.
#ifndef WAFBENCH_BUILD_NAME
#define WAFBENCH_BUILD_NAME "modsecurity"
#endif

namespace wafbench {
namespace modsec {
namespace {

using FilterEnvoy = envoy_dynamic_module_type_http_filter_envoy_ptr;

envoy_dynamic_module_type_module_buffer Buf(std::string_view s) { return {s.data(), s.size()}; }
std::string_view View(const envoy_dynamic_module_type_envoy_buffer& b) {
  return b.ptr == nullptr ? std::string_view() : std::string_view(b.ptr, b.length);
}

void Log(envoy_dynamic_module_type_log_level level, const std::string& msg) {
  if (envoy_dynamic_module_callback_log_enabled(level)) envoy_dynamic_module_callback_log(level, Buf(msg));
}

constexpr std::string_view kBlockedBody = "Request blocked by wafbench modsecurity filter\n";
constexpr std::string_view kErrorBody = "wafbench modsecurity filter error\n";
constexpr std::string_view kErrorDetails = "wafbench_modsecurity_engine_error";

// SendReply answers the stream with a local reply. It does not allocate.
void SendReply(FilterEnvoy envoy, uint32_t status, std::string_view body, std::string_view details) {
  envoy_dynamic_module_type_module_http_header ct = {"content-type", 12, "text/plain", 10};
  envoy_dynamic_module_callback_http_send_response(envoy, status, &ct, 1, Buf(body), Buf(details));
}

// ModuleInfo is the contract's one line per filter config: engine, runtime
// engine version, build (mode name) and number of rules loaded.
std::string ModuleInfo(const Engine& engine) {
  nlohmann::ordered_json info = {
      {"module", "wafbench_modsecurity"}, {"engine", "modsecurity"},    {"engine_version", engine.Version()},
      {"build", WAFBENCH_BUILD_NAME},     {"rules", engine.NumRules()},
  };
  return "wafbench-module " + info.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// Counter indexes; names are defined in FilterConfig::DefineCounters.
enum CounterIndex {
  kRequests,
  kBlockedPhase1,
  kBlockedPhase2,
  kEngineErrors,
  kBodyTooLarge,
  kPhase1Ns,
  kBodyNs,
  kPhase2Ns,
  kLoggingNs,
  kNumCounters,
};

constexpr const char* kCounterNames[kNumCounters] = {
    "wafbench_modsecurity_requests",      "wafbench_modsecurity_blocked_phase1", "wafbench_modsecurity_blocked_phase2",
    "wafbench_modsecurity_engine_errors", "wafbench_modsecurity_body_too_large", "wafbench_modsecurity_phase1_ns",
    "wafbench_modsecurity_body_ns",       "wafbench_modsecurity_phase2_ns",      "wafbench_modsecurity_logging_ns",
};
constexpr int kFirstTimer = kPhase1Ns;

struct FilterConfig {
  Config config;
  std::unique_ptr<Engine> engine;
  bool stage_timers = false;
  size_t counter_ids[kNumCounters] = {};
  bool counter_ok[kNumCounters] = {};
};

class Filter {
 public:
  Filter(const FilterConfig* config, FilterEnvoy envoy) : config_(config), envoy_(envoy) {}

  envoy_dynamic_module_type_on_http_filter_request_headers_status OnRequestHeaders(bool end_of_stream);
  envoy_dynamic_module_type_on_http_filter_request_body_status OnRequestBody(bool end_of_stream);
  // OnRequestTrailers ends a request whose body was followed by trailers:
  // the body is complete, so phase 2 runs here (never skipped).
  envoy_dynamic_module_type_on_http_filter_request_trailers_status OnRequestTrailers();
  envoy_dynamic_module_type_on_http_filter_response_headers_status OnResponseHeaders(bool end_of_stream);
  // OnResponseBody buffers the response body while phase 4 waits for it
  // (response inspection on and SecResponseBodyAccess On), then runs phase 4.
  envoy_dynamic_module_type_on_http_filter_response_body_status OnResponseBody(bool end_of_stream);
  // OnResponseTrailers ends a response body that phase 4 waits for.
  envoy_dynamic_module_type_on_http_filter_response_trailers_status OnResponseTrailers();
  void OnStreamComplete();
  // FailClosed handles an exception that escaped one of the above: it counts
  // the request as an engine error (once) and, when a response can still be
  // sent and none was, answers 500. It never throws.
  void FailClosed(bool can_respond) noexcept;

 private:
  void Count(CounterIndex c, uint64_t v = 1) {
    if (config_->counter_ok[c]) {
      envoy_dynamic_module_callback_http_filter_increment_counter(envoy_, config_->counter_ids[c], nullptr, 0, v);
    }
  }
  uint64_t Now() const {
    if (!config_->stage_timers) return 0;
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
  }
  void AddTime(CounterIndex c, uint64_t start) {
    if (config_->stage_timers) Count(c, Now() - start);
  }
  // Reject sends the local reply for a verdict and counts it.
  void Reject(const Verdict& v, CounterIndex blocked_counter, const char* details);
  // RunPhase2 feeds the request body (if any) and runs processRequestBody.
  Verdict RunPhase2(bool with_body);
  // RunPhase4 feeds the buffered response body (when with_body) and runs
  // processResponseBody.
  Verdict RunPhase4(bool with_body);
  void AppendChunks(envoy_dynamic_module_type_http_body_type type, Verdict* v);

  const FilterConfig* config_;
  FilterEnvoy envoy_;
  std::unique_ptr<Transaction> txn_;
  bool rejected_ = false;
  bool error_counted_ = false;
  bool phase2_done_ = false;
  bool response_body_wanted_ = false;  // phase 4 waits for the response body
};

void Filter::Reject(const Verdict& v, CounterIndex blocked_counter, const char* details) {
  rejected_ = true;
  if (txn_ != nullptr && txn_->engine_error()) {
    if (!error_counted_) Count(kEngineErrors);
    error_counted_ = true;
    SendReply(envoy_, 500, kErrorBody, kErrorDetails);
    return;
  }
  Count(blocked_counter);
  SendReply(envoy_, static_cast<uint32_t>(v.status), kBlockedBody, details);
}

void Filter::FailClosed(bool can_respond) noexcept {
  if (!error_counted_) {
    error_counted_ = true;
    Count(kEngineErrors);
  }
  if (can_respond && !rejected_) {
    rejected_ = true;
    SendReply(envoy_, 500, kErrorBody, kErrorDetails);
  }
}

envoy_dynamic_module_type_on_http_filter_request_headers_status Filter::OnRequestHeaders(bool end_of_stream) {
  Count(kRequests);
  const uint64_t t0 = Now();
  size_t n = envoy_dynamic_module_callback_http_get_headers_size(
      envoy_, envoy_dynamic_module_type_http_header_type_RequestHeader);
  std::vector<envoy_dynamic_module_type_envoy_http_header> headers(n);
  if (n > 0 && !envoy_dynamic_module_callback_http_get_headers(
                   envoy_, envoy_dynamic_module_type_http_header_type_RequestHeader, headers.data())) {
    headers.clear();
  }
  std::string path = "/";
  std::string method = "GET";
  std::string_view authority;
  bool have_host = false;
  for (const auto& h : headers) {
    std::string_view k(h.key_ptr, h.key_length);
    std::string_view v(h.value_ptr, h.value_length);
    if (k == ":path") {
      path.assign(v.data(), v.size());
    } else if (k == ":method") {
      method.assign(v.data(), v.size());
    } else if (k == ":authority") {
      authority = v;
    } else if (k == "host") {
      have_host = true;
    }
  }

  // Endpoints: 1.40's address attributes include the port ("ip:port").
  std::string client_ip = "0.0.0.0", server_ip = "0.0.0.0";
  int client_port = 0, server_port = 0;
  envoy_dynamic_module_type_envoy_buffer buf = {nullptr, 0};
  uint64_t port = 0;
  if (envoy_dynamic_module_callback_http_filter_get_attribute_string(
          envoy_, envoy_dynamic_module_type_attribute_id_SourceAddress, &buf)) {
    SplitHostPort(View(buf), &client_ip, &client_port);
  }
  if (envoy_dynamic_module_callback_http_filter_get_attribute_int(
          envoy_, envoy_dynamic_module_type_attribute_id_SourcePort, &port)) {
    client_port = static_cast<int>(port);
  }
  buf = {nullptr, 0};
  if (envoy_dynamic_module_callback_http_filter_get_attribute_string(
          envoy_, envoy_dynamic_module_type_attribute_id_DestinationAddress, &buf)) {
    SplitHostPort(View(buf), &server_ip, &server_port);
  }
  if (envoy_dynamic_module_callback_http_filter_get_attribute_int(
          envoy_, envoy_dynamic_module_type_attribute_id_DestinationPort, &port)) {
    server_port = static_cast<int>(port);
  }
  std::string version = "1.1";
  buf = {nullptr, 0};
  if (envoy_dynamic_module_callback_http_filter_get_attribute_string(
          envoy_, envoy_dynamic_module_type_attribute_id_RequestProtocol, &buf)) {
    std::string_view proto = View(buf);
    if (proto.substr(0, 5) == "HTTP/") proto.remove_prefix(5);
    if (!proto.empty()) version.assign(proto.data(), proto.size());
  }
  if (envoy_dynamic_module_callback_log_enabled(envoy_dynamic_module_type_log_level_Trace)) {
    Log(envoy_dynamic_module_type_log_level_Trace, "wafbench_modsecurity: client " + client_ip + " port " +
                                                       std::to_string(client_port) + " server " + server_ip + " port " +
                                                       std::to_string(server_port) + " HTTP/" + version);
  }

  txn_ = config_->engine->NewTransaction();
  Verdict v = txn_->ProcessConnection(client_ip, client_port, server_ip, server_port);
  if (!v.blocked()) v = txn_->ProcessUri(path, method, version);
  if (!v.blocked()) {
    if (!have_host && !authority.empty()) txn_->AddRequestHeader("Host", authority);
    for (const auto& h : headers) {
      if (h.key_length == 0 || h.key_ptr[0] == ':') continue;
      txn_->AddRequestHeader(std::string_view(h.key_ptr, h.key_length), std::string_view(h.value_ptr, h.value_length));
    }
    v = txn_->ProcessRequestHeaders();
  }
  AddTime(kPhase1Ns, t0);
  if (v.blocked()) {
    Reject(v, kBlockedPhase1, "wafbench_modsecurity_phase1");
    return envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
  }
  if (end_of_stream) {
    v = RunPhase2(false);
    if (v.blocked()) {
      Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase2");
      return envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
    }
    return envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue;
  }
  // Hold the headers until the body has been inspected. Make sure Envoy will
  // buffer up to our own limit so that we, not Envoy, decide about size.
  uint64_t limit = envoy_dynamic_module_callback_http_get_buffer_limit(envoy_);
  uint64_t want = config_->config.max_body_bytes + 65536;
  if (limit != 0 && limit < want) envoy_dynamic_module_callback_http_set_buffer_limit(envoy_, want);
  return envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
}

void Filter::AppendChunks(envoy_dynamic_module_type_http_body_type type, Verdict* v) {
  size_t n = envoy_dynamic_module_callback_http_get_body_chunks_size(envoy_, type);
  if (n == 0) return;
  std::vector<envoy_dynamic_module_type_envoy_buffer> chunks(n);
  if (!envoy_dynamic_module_callback_http_get_body_chunks(envoy_, type, chunks.data())) return;
  const bool response = type == envoy_dynamic_module_type_http_body_type_BufferedResponseBody ||
                        type == envoy_dynamic_module_type_http_body_type_ReceivedResponseBody;
  for (const auto& c : chunks) {
    if (v->blocked()) return;
    *v = response ? txn_->AppendResponseBody(c.ptr, c.length) : txn_->AppendRequestBody(c.ptr, c.length);
  }
}

Verdict Filter::RunPhase2(bool with_body) {
  phase2_done_ = true;
  Verdict v;
  if (with_body) {
    const uint64_t t0 = Now();
    // The chunk of the current event is not yet part of the buffered body,
    // unless a previous filter buffered everything and handed it on at once.
    if (!envoy_dynamic_module_callback_http_received_buffered_request_body(envoy_)) {
      AppendChunks(envoy_dynamic_module_type_http_body_type_BufferedRequestBody, &v);
    }
    if (!v.blocked()) AppendChunks(envoy_dynamic_module_type_http_body_type_ReceivedRequestBody, &v);
    AddTime(kBodyNs, t0);
    if (v.blocked()) return v;
  }
  const uint64_t t1 = Now();
  v = txn_->ProcessRequestBody();
  AddTime(kPhase2Ns, t1);
  return v;
}

envoy_dynamic_module_type_on_http_filter_request_body_status Filter::OnRequestBody(bool end_of_stream) {
  if (rejected_ || txn_ == nullptr) {
    return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;
  }
  bool replayed = envoy_dynamic_module_callback_http_received_buffered_request_body(envoy_);
  uint64_t total = envoy_dynamic_module_callback_http_get_body_size(
      envoy_, envoy_dynamic_module_type_http_body_type_ReceivedRequestBody);
  if (!replayed) {
    total += envoy_dynamic_module_callback_http_get_body_size(
        envoy_, envoy_dynamic_module_type_http_body_type_BufferedRequestBody);
  }
  if (total > config_->config.max_body_bytes) {
    Reject(Verdict{413}, kBodyTooLarge, "wafbench_modsecurity_body_too_large");
    return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;
  }
  if (!end_of_stream) return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndBuffer;
  Verdict v = RunPhase2(true);
  if (v.blocked()) {
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase2");
    return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;
  }
  return envoy_dynamic_module_type_on_http_filter_request_body_status_Continue;
}

envoy_dynamic_module_type_on_http_filter_request_trailers_status Filter::OnRequestTrailers() {
  if (rejected_) return envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration;
  if (txn_ == nullptr || phase2_done_) {
    return envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue;
  }
  Verdict v = RunPhase2(true);
  if (v.blocked()) {
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase2");
    return envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration;
  }
  return envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue;
}

envoy_dynamic_module_type_on_http_filter_response_headers_status Filter::OnResponseHeaders(bool end_of_stream) {
  if (!config_->config.inspect_response || rejected_ || txn_ == nullptr) {
    return envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue;
  }
  size_t n = envoy_dynamic_module_callback_http_get_headers_size(
      envoy_, envoy_dynamic_module_type_http_header_type_ResponseHeader);
  std::vector<envoy_dynamic_module_type_envoy_http_header> headers(n);
  if (n > 0 && !envoy_dynamic_module_callback_http_get_headers(
                   envoy_, envoy_dynamic_module_type_http_header_type_ResponseHeader, headers.data())) {
    headers.clear();
  }
  int status = 200;
  for (const auto& h : headers) {
    std::string_view k(h.key_ptr, h.key_length);
    if (k == ":status") {
      status = std::atoi(std::string(h.value_ptr, h.value_length).c_str());
      continue;
    }
    if (!k.empty() && k[0] == ':') continue;
    txn_->AddResponseHeader(k, std::string_view(h.value_ptr, h.value_length));
  }
  Verdict v = txn_->ProcessResponseHeaders(status, "HTTP/1.1");
  if (v.blocked()) {
    // No separate counter: response blocking is off in the benchmark setup.
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase3");
    return envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration;
  }
  if (config_->engine->ResponseBodyAccess() && !end_of_stream) {
    // Hold the headers until phase 4 has seen the body (a phase-4 deny can
    // then still answer instead of the response).
    response_body_wanted_ = true;
    return envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration;
  }
  v = RunPhase4(false);
  if (v.blocked()) {
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase4");
    return envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration;
  }
  return envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue;
}

Verdict Filter::RunPhase4(bool with_body) {
  response_body_wanted_ = false;
  Verdict v;
  if (with_body) {
    // As for the request body: this event's chunk is not yet buffered,
    // unless an earlier filter buffered everything and handed it on at once.
    if (!envoy_dynamic_module_callback_http_received_buffered_response_body(envoy_)) {
      AppendChunks(envoy_dynamic_module_type_http_body_type_BufferedResponseBody, &v);
    }
    if (!v.blocked()) AppendChunks(envoy_dynamic_module_type_http_body_type_ReceivedResponseBody, &v);
    if (v.blocked()) return v;
  }
  return txn_->ProcessResponseBody();
}

envoy_dynamic_module_type_on_http_filter_response_body_status Filter::OnResponseBody(bool end_of_stream) {
  if (!response_body_wanted_ || rejected_ || txn_ == nullptr) {
    return envoy_dynamic_module_type_on_http_filter_response_body_status_Continue;
  }
  uint64_t total = envoy_dynamic_module_callback_http_get_body_size(
      envoy_, envoy_dynamic_module_type_http_body_type_ReceivedResponseBody);
  if (!envoy_dynamic_module_callback_http_received_buffered_response_body(envoy_)) {
    total += envoy_dynamic_module_callback_http_get_body_size(
        envoy_, envoy_dynamic_module_type_http_body_type_BufferedResponseBody);
  }
  // Buffer up to the engine's SecResponseBodyLimit (else the module's own
  // request limit); beyond it phase 4 runs on what arrived so far, as
  // libmodsecurity keeps no more than its limit anyway.
  uint64_t limit = config_->engine->ResponseBodyLimit();
  if (limit == 0) limit = config_->config.max_body_bytes;
  if (!end_of_stream && total < limit) {
    return envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationAndBuffer;
  }
  Verdict v = RunPhase4(true);
  if (v.blocked()) {
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase4");
    return envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationNoBuffer;
  }
  return envoy_dynamic_module_type_on_http_filter_response_body_status_Continue;
}

envoy_dynamic_module_type_on_http_filter_response_trailers_status Filter::OnResponseTrailers() {
  if (!response_body_wanted_ || rejected_ || txn_ == nullptr) {
    return envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue;
  }
  // Trailers end the response: the whole body is buffered.
  response_body_wanted_ = false;
  Verdict v;
  AppendChunks(envoy_dynamic_module_type_http_body_type_BufferedResponseBody, &v);
  if (!v.blocked()) v = txn_->ProcessResponseBody();
  if (v.blocked()) {
    Reject(v, kBlockedPhase2, "wafbench_modsecurity_phase4");
    return envoy_dynamic_module_type_on_http_filter_response_trailers_status_StopIteration;
  }
  return envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue;
}

void Filter::OnStreamComplete() {
  if (txn_ == nullptr) return;
  const uint64_t t0 = Now();
  txn_->ProcessLogging();
  AddTime(kLoggingNs, t0);
  if (txn_->engine_error() && !error_counted_) {
    error_counted_ = true;
    Count(kEngineErrors);
  }
}

const Filter* AsConstFilter(envoy_dynamic_module_type_http_filter_module_ptr p) {
  return static_cast<const Filter*>(p);
}
Filter* AsFilter(envoy_dynamic_module_type_http_filter_module_ptr p) { return const_cast<Filter*>(AsConstFilter(p)); }

}  // namespace
}  // namespace modsec
}  // namespace wafbench

using wafbench::modsec::AsFilter;
using wafbench::modsec::Filter;
using wafbench::modsec::FilterConfig;
using wafbench::modsec::kErrorBody;
using wafbench::modsec::kErrorDetails;
using wafbench::modsec::SendReply;

// --------------------------------------------------------------------------
// Exported hooks
// --------------------------------------------------------------------------

WAFBENCH_EXPORT envoy_dynamic_module_type_abi_version_module_ptr envoy_dynamic_module_on_program_init(void) {
  return WAFBENCH_ENVOY_ABI_VERSION;
}

WAFBENCH_EXPORT envoy_dynamic_module_type_http_filter_config_module_ptr envoy_dynamic_module_on_http_filter_config_new(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr filter_config_envoy_ptr,
    envoy_dynamic_module_type_envoy_buffer name, envoy_dynamic_module_type_envoy_buffer config) {
  using namespace wafbench::modsec;
  try {
    auto fc = std::make_unique<FilterConfig>();
    std::string error;
    if (!ParseConfig(View(config), &fc->config, &error)) {
      Log(envoy_dynamic_module_type_log_level_Error, "wafbench_modsecurity: " + error);
      return nullptr;
    }
    // Rule matches go to Envoy's debug log; they are formatted only when
    // that level is on. With match_log they go to the info level instead,
    // one MatchLine each (README.md, "match_log").
    Logger log;
#ifdef WAFBENCH_NO_MATCH_LOG
    // The match_log cost check's variant: the switch compiled out.
    if (fc->config.match_log) {
      Log(envoy_dynamic_module_type_log_level_Error,
          "wafbench_modsecurity: match_log: compiled out of this module (WAFBENCH_NO_MATCH_LOG)");
      return nullptr;
    }
    {
#else
    if (fc->config.match_log) {
      log.match_lines = true;
      log.write = [](std::string_view line) {
        Log(envoy_dynamic_module_type_log_level_Info, "wafbench_modsecurity: " + std::string(line));
      };
    } else {
#endif
      log.enabled = [] { return envoy_dynamic_module_callback_log_enabled(envoy_dynamic_module_type_log_level_Debug); };
      log.write = [](std::string_view line) {
        Log(envoy_dynamic_module_type_log_level_Debug, "wafbench_modsecurity: " + std::string(line));
      };
    }
    fc->engine = Engine::Create(fc->config.rules_file, &error, log);
    if (fc->engine == nullptr) {
      Log(envoy_dynamic_module_type_log_level_Error, "wafbench_modsecurity: cannot load rules: " + error);
      return nullptr;
    }
    const char* timers = std::getenv("WAFBENCH_STAGE_TIMERS");
    fc->stage_timers = timers != nullptr && std::strcmp(timers, "1") == 0;
    for (int i = 0; i < kNumCounters; ++i) {
      if (i >= kFirstTimer && !fc->stage_timers) continue;
      fc->counter_ok[i] = envoy_dynamic_module_callback_http_filter_config_define_counter(
                              filter_config_envoy_ptr, Buf(kCounterNames[i]), nullptr, 0, &fc->counter_ids[i]) ==
                          envoy_dynamic_module_type_metrics_result_Success;
      if (!fc->counter_ok[i]) {
        Log(envoy_dynamic_module_type_log_level_Warn,
            std::string("wafbench_modsecurity: cannot define counter ") + kCounterNames[i]);
      }
    }
    Log(envoy_dynamic_module_type_log_level_Info, ModuleInfo(*fc->engine));
    Log(envoy_dynamic_module_type_log_level_Info,
        "wafbench_modsecurity: filter " + std::string(View(name)) + " loaded " +
            std::to_string(fc->engine->NumRules()) + " rules from " + fc->config.rules_file +
            (fc->stage_timers ? " (stage timers on)" : "") + (fc->config.match_log ? " (match_log on)" : ""));
    return fc.release();
  } catch (const std::exception& e) {
    Log(envoy_dynamic_module_type_log_level_Error, std::string("wafbench_modsecurity: config: ") + e.what());
    return nullptr;
  } catch (...) {
    Log(envoy_dynamic_module_type_log_level_Error, "wafbench_modsecurity: config: unknown exception");
    return nullptr;
  }
}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_destroy(
    envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr) {
  delete static_cast<const FilterConfig*>(filter_config_ptr);  // destructors do not throw
}

WAFBENCH_EXPORT envoy_dynamic_module_type_http_filter_per_route_config_module_ptr
envoy_dynamic_module_on_http_filter_per_route_config_new(envoy_dynamic_module_type_envoy_buffer,
                                                         envoy_dynamic_module_type_envoy_buffer) {
  // Per-route configuration is not supported; returning null rejects it.
  return nullptr;
}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_per_route_config_destroy(
    envoy_dynamic_module_type_http_filter_per_route_config_module_ptr) {}

WAFBENCH_EXPORT envoy_dynamic_module_type_http_filter_module_ptr
envoy_dynamic_module_on_http_filter_new(envoy_dynamic_module_type_http_filter_config_module_ptr filter_config_ptr,
                                        envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr) {
  return new (std::nothrow) Filter(static_cast<const FilterConfig*>(filter_config_ptr), filter_envoy_ptr);
}

// Every hook that runs filter code catches everything: no exception crosses
// the C ABI, and the request fails closed (500, counted as an engine error).
// A null filter (allocation failed in filter_new) is answered 500 as well.

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_request_headers_status
envoy_dynamic_module_on_http_filter_request_headers(envoy_dynamic_module_type_http_filter_envoy_ptr filter_envoy_ptr,
                                                    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                    bool end_of_stream) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) {
    SendReply(filter_envoy_ptr, 500, kErrorBody, kErrorDetails);
    return envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
  }
  try {
    return f->OnRequestHeaders(end_of_stream);
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
  }
}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_request_body_status
envoy_dynamic_module_on_http_filter_request_body(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                 envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                 bool end_of_stream) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;
  try {
    return f->OnRequestBody(end_of_stream);
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;
  }
}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_request_trailers_status
envoy_dynamic_module_on_http_filter_request_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration;
  try {
    return f->OnRequestTrailers();
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration;
  }
}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_response_headers_status
envoy_dynamic_module_on_http_filter_response_headers(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                     envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                     bool end_of_stream) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return envoy_dynamic_module_type_on_http_filter_response_headers_status_Continue;
  try {
    return f->OnResponseHeaders(end_of_stream);
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_response_headers_status_StopIteration;
  }
}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_response_body_status
envoy_dynamic_module_on_http_filter_response_body(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                  envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr,
                                                  bool end_of_stream) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return envoy_dynamic_module_type_on_http_filter_response_body_status_Continue;
  try {
    return f->OnResponseBody(end_of_stream);
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_response_body_status_StopIterationNoBuffer;
  }
}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_response_trailers_status
envoy_dynamic_module_on_http_filter_response_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return envoy_dynamic_module_type_on_http_filter_response_trailers_status_Continue;
  try {
    return f->OnResponseTrailers();
  } catch (...) {
    f->FailClosed(true);
    return envoy_dynamic_module_type_on_http_filter_response_trailers_status_StopIteration;
  }
}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_stream_complete(
    envoy_dynamic_module_type_http_filter_envoy_ptr,
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  Filter* f = AsFilter(filter_module_ptr);
  if (f == nullptr) return;
  try {
    f->OnStreamComplete();
  } catch (...) {
    f->FailClosed(false);  // the response has been sent: count only
  }
}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_destroy(
    envoy_dynamic_module_type_http_filter_module_ptr filter_module_ptr) {
  delete AsFilter(filter_module_ptr);
}

// Hooks this filter does not use. Exported so the set is complete.

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_callout_done(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t,
    envoy_dynamic_module_type_http_callout_result, envoy_dynamic_module_type_envoy_http_header*, size_t,
    envoy_dynamic_module_type_envoy_buffer*, size_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_stream_headers(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t,
    envoy_dynamic_module_type_envoy_http_header*, size_t, bool) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_stream_data(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t,
    const envoy_dynamic_module_type_envoy_buffer*, size_t, bool) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t,
    envoy_dynamic_module_type_envoy_http_header*, size_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_stream_complete(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_http_stream_reset(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr, uint64_t,
    envoy_dynamic_module_type_http_stream_reset_reason) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_scheduled(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                                   envoy_dynamic_module_type_http_filter_module_ptr,
                                                                   uint64_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_scheduled(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_callout_done(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t, envoy_dynamic_module_type_http_callout_result, envoy_dynamic_module_type_envoy_http_header*, size_t,
    envoy_dynamic_module_type_envoy_buffer*, size_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_stream_headers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t, envoy_dynamic_module_type_envoy_http_header*, size_t, bool) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_stream_data(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t, const envoy_dynamic_module_type_envoy_buffer*, size_t, bool) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_stream_trailers(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t, envoy_dynamic_module_type_envoy_http_header*, size_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_stream_complete(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_config_http_stream_reset(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_http_filter_config_module_ptr,
    uint64_t, envoy_dynamic_module_type_http_stream_reset_reason) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_downstream_above_write_buffer_high_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr) {}

WAFBENCH_EXPORT void envoy_dynamic_module_on_http_filter_downstream_below_write_buffer_low_watermark(
    envoy_dynamic_module_type_http_filter_envoy_ptr, envoy_dynamic_module_type_http_filter_module_ptr) {}

WAFBENCH_EXPORT envoy_dynamic_module_type_on_http_filter_local_reply_status
envoy_dynamic_module_on_http_filter_local_reply(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                envoy_dynamic_module_type_http_filter_module_ptr, uint32_t,
                                                envoy_dynamic_module_type_envoy_buffer, bool) {
  return envoy_dynamic_module_type_on_http_filter_local_reply_status_Continue;
}
