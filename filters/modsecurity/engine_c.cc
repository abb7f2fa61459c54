#include "engine_c.h"

#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "engine.h"

struct wafbench_msc_engine {
  std::unique_ptr<wafbench::modsec::Engine> engine;
};

namespace {

void CopyError(const std::string& msg, char* errbuf, size_t errbuf_len) {
  if (errbuf == nullptr || errbuf_len == 0) return;
  size_t n = msg.size() < errbuf_len - 1 ? msg.size() : errbuf_len - 1;
  std::memcpy(errbuf, msg.data(), n);
  errbuf[n] = '\0';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace

extern "C" wafbench_msc_engine* wafbench_msc_engine_new(const char* rules_file, char* errbuf, size_t errbuf_len) {
  if (rules_file == nullptr) {
    CopyError("rules_file: NULL", errbuf, errbuf_len);
    return nullptr;
  }
  try {
    std::string error;
    auto engine = wafbench::modsec::Engine::Create(rules_file, &error);
    if (engine == nullptr) {
      CopyError(error, errbuf, errbuf_len);
      return nullptr;
    }
    return new wafbench_msc_engine{std::move(engine)};
  } catch (const std::exception& e) {
    CopyError(e.what(), errbuf, errbuf_len);
    return nullptr;
  }
}

extern "C" int wafbench_msc_engine_evaluate(wafbench_msc_engine* engine, const char* method, size_t method_len,
                                            const char* uri, size_t uri_len, const char* headers, size_t headers_len,
                                            const char* body, size_t body_len) {
  if (engine == nullptr || method == nullptr || uri == nullptr) return -1;
  if ((headers == nullptr && headers_len != 0) || (body == nullptr && body_len != 0)) return -1;
  try {
    wafbench::modsec::Request req;
    req.method.assign(method, method_len);
    req.uri.assign(uri, uri_len);
    std::string_view rest(headers == nullptr ? "" : headers, headers_len);
    while (!rest.empty()) {
      size_t nl = rest.find('\n');
      std::string_view line = rest.substr(0, nl);
      rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
      size_t colon = line.find(':');
      if (colon == std::string_view::npos || colon == 0) continue;
      req.headers.emplace_back(std::string(Trim(line.substr(0, colon))), std::string(Trim(line.substr(colon + 1))));
    }
    if (body_len != 0) req.body.assign(body, body_len);
    return wafbench::modsec::Evaluate(*engine->engine, req);
  } catch (...) {
    return 500;
  }
}

extern "C" void wafbench_msc_engine_free(wafbench_msc_engine* engine) { delete engine; }
