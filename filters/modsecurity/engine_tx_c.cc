#include "engine_tx_c.h"

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "engine.h"

struct wafbench_msc_waf {
  wafbench::modsec::Config config;
  std::unique_ptr<wafbench::modsec::Engine> engine;
};

struct wafbench_msc_tx {
  std::unique_ptr<wafbench::modsec::Transaction> txn;
  // failed is set when the wrapper itself could not run a step (an
  // allocation while copying an argument); the Transaction's own failures
  // are its engine_error().
  bool failed = false;
};

namespace {

constexpr int kErrorStatus = 500;

void CopyError(const std::string& msg, char* errbuf, size_t errbuf_len) {
  if (errbuf == nullptr || errbuf_len == 0) return;
  size_t n = msg.size() < errbuf_len - 1 ? msg.size() : errbuf_len - 1;
  std::memcpy(errbuf, msg.data(), n);
  errbuf[n] = '\0';
}

std::string_view View(const char* p, size_t n) { return p == nullptr ? std::string_view() : std::string_view(p, n); }

// WriteMatchLine writes one match_log line to stderr in one call, so lines
// of concurrent transactions do not interleave.
void WriteMatchLine(std::string_view line) {
  std::string out = "wafbench_modsecurity: ";
  out.append(line);
  out.push_back('\n');
  std::fwrite(out.data(), 1, out.size(), stderr);
}

// Step runs one verdict-returning step of tx, failing closed (500) when the
// transaction already failed or the wrapper cannot run the step.
template <typename F>
int Step(wafbench_msc_tx* tx, F&& step) {
  if (tx == nullptr || tx->txn == nullptr) return kErrorStatus;
  if (tx->failed) return kErrorStatus;
  try {
    return step(*tx->txn).status;
  } catch (...) {
    tx->failed = true;
    return kErrorStatus;
  }
}

}  // namespace

extern "C" wafbench_msc_waf* wafbench_msc_waf_new(const char* config, size_t config_len, char* errbuf,
                                                  size_t errbuf_len) {
  using wafbench::modsec::Engine;
  using wafbench::modsec::Logger;
  try {
    auto waf = std::make_unique<wafbench_msc_waf>();
    std::string error;
    if (!wafbench::modsec::ParseConfig(View(config, config_len), &waf->config, &error)) {
      CopyError("wafbench_modsecurity: " + error, errbuf, errbuf_len);
      return nullptr;
    }
    // As the module: with match_log one MatchLine per match, else matches are
    // never formatted (the module formats them only at Envoy's debug level,
    // which this host does not have).
    Logger log;
    if (waf->config.match_log) {
      log.match_lines = true;
      log.write = WriteMatchLine;
    } else {
      log.enabled = [] { return false; };
    }
    waf->engine = Engine::Create(waf->config.rules_file, &error, log);
    if (waf->engine == nullptr) {
      CopyError("wafbench_modsecurity: cannot load rules: " + error, errbuf, errbuf_len);
      return nullptr;
    }
    return waf.release();
  } catch (const std::exception& e) {
    CopyError(std::string("wafbench_modsecurity: config: ") + e.what(), errbuf, errbuf_len);
    return nullptr;
  } catch (...) {
    CopyError("wafbench_modsecurity: config: unknown exception", errbuf, errbuf_len);
    return nullptr;
  }
}

extern "C" void wafbench_msc_waf_free(wafbench_msc_waf* waf) { delete waf; }

extern "C" size_t wafbench_msc_waf_num_rules(const wafbench_msc_waf* waf) { return waf->engine->NumRules(); }

extern "C" const char* wafbench_msc_waf_version(const wafbench_msc_waf* waf) { return waf->engine->Version().c_str(); }

extern "C" uint64_t wafbench_msc_waf_max_body_bytes(const wafbench_msc_waf* waf) { return waf->config.max_body_bytes; }

extern "C" int wafbench_msc_waf_inspect_response(const wafbench_msc_waf* waf) {
  return waf->config.inspect_response ? 1 : 0;
}

extern "C" wafbench_msc_tx* wafbench_msc_tx_new(wafbench_msc_waf* waf) {
  if (waf == nullptr) return nullptr;
  try {
    auto tx = std::make_unique<wafbench_msc_tx>();
    tx->txn = waf->engine->NewTransaction();
    return tx.release();
  } catch (...) {
    return nullptr;
  }
}

extern "C" void wafbench_msc_tx_free(wafbench_msc_tx* tx) { delete tx; }

extern "C" int wafbench_msc_tx_connection(wafbench_msc_tx* tx, const char* client_ip, size_t client_ip_len,
                                          int client_port, const char* server_ip, size_t server_ip_len,
                                          int server_port) {
  return Step(tx, [&](wafbench::modsec::Transaction& t) {
    return t.ProcessConnection(std::string(View(client_ip, client_ip_len)), client_port,
                               std::string(View(server_ip, server_ip_len)), server_port);
  });
}

extern "C" int wafbench_msc_tx_uri(wafbench_msc_tx* tx, const char* uri, size_t uri_len, const char* method,
                                   size_t method_len, const char* version, size_t version_len) {
  return Step(tx, [&](wafbench::modsec::Transaction& t) {
    return t.ProcessUri(std::string(View(uri, uri_len)), std::string(View(method, method_len)),
                        std::string(View(version, version_len)));
  });
}

extern "C" void wafbench_msc_tx_add_header(wafbench_msc_tx* tx, const char* name, size_t name_len, const char* value,
                                           size_t value_len) {
  Step(tx, [&](wafbench::modsec::Transaction& t) {
    t.AddRequestHeader(View(name, name_len), View(value, value_len));
    return wafbench::modsec::Verdict{};
  });
}

extern "C" int wafbench_msc_tx_process_headers(wafbench_msc_tx* tx) {
  return Step(tx, [](wafbench::modsec::Transaction& t) { return t.ProcessRequestHeaders(); });
}

extern "C" int wafbench_msc_tx_append_body(wafbench_msc_tx* tx, const char* data, size_t len) {
  return Step(tx, [&](wafbench::modsec::Transaction& t) { return t.AppendRequestBody(data, len); });
}

extern "C" int wafbench_msc_tx_process_body(wafbench_msc_tx* tx) {
  return Step(tx, [](wafbench::modsec::Transaction& t) { return t.ProcessRequestBody(); });
}

extern "C" void wafbench_msc_tx_add_response_header(wafbench_msc_tx* tx, const char* name, size_t name_len,
                                                    const char* value, size_t value_len) {
  Step(tx, [&](wafbench::modsec::Transaction& t) {
    t.AddResponseHeader(View(name, name_len), View(value, value_len));
    return wafbench::modsec::Verdict{};
  });
}

extern "C" int wafbench_msc_tx_process_response_headers(wafbench_msc_tx* tx, int status, const char* protocol,
                                                        size_t protocol_len) {
  return Step(tx, [&](wafbench::modsec::Transaction& t) {
    return t.ProcessResponseHeaders(status, std::string(View(protocol, protocol_len)));
  });
}

extern "C" int wafbench_msc_tx_process_response_body(wafbench_msc_tx* tx) {
  return Step(tx, [](wafbench::modsec::Transaction& t) { return t.ProcessResponseBody(); });
}

extern "C" void wafbench_msc_tx_logging(wafbench_msc_tx* tx) {
  Step(tx, [](wafbench::modsec::Transaction& t) {
    t.ProcessLogging();
    return wafbench::modsec::Verdict{};
  });
}

extern "C" int wafbench_msc_tx_engine_error(const wafbench_msc_tx* tx) {
  if (tx == nullptr || tx->txn == nullptr) return 1;
  return tx->failed || tx->txn->engine_error() ? 1 : 0;
}
