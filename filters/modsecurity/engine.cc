#include "engine.h"

#include <modsecurity/intervention.h>
#include <modsecurity/modsecurity.h>
#include <modsecurity/rules_set.h>
#include <modsecurity/transaction.h>

#include <cctype>
#include <charconv>
#include <exception>

namespace wafbench {
namespace modsec {

// ---------------------------------------------------------------------------
// Config parsing: a deliberately small JSON reader for one flat object.
// ---------------------------------------------------------------------------

namespace {

class JsonReader {
 public:
  explicit JsonReader(std::string_view in) : in_(in) {}

  void SkipSpace() {
    while (pos_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    SkipSpace();
    if (pos_ < in_.size() && in_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool AtEnd() {
    SkipSpace();
    return pos_ == in_.size();
  }
  size_t pos() const { return pos_; }
  char Peek() {
    SkipSpace();
    return pos_ < in_.size() ? in_[pos_] : '\0';
  }

  // ReadString reads a JSON string; \uXXXX escapes are accepted only for ASCII.
  bool ReadString(std::string* out) {
    if (!Consume('"')) return false;
    out->clear();
    while (pos_ < in_.size()) {
      char c = in_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= in_.size()) return false;
      char e = in_[pos_++];
      switch (e) {
        case '"':
          out->push_back('"');
          break;
        case '\\':
          out->push_back('\\');
          break;
        case '/':
          out->push_back('/');
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          if (pos_ + 4 > in_.size()) return false;
          unsigned v = 0;
          auto res = std::from_chars(in_.data() + pos_, in_.data() + pos_ + 4, v, 16);
          if (res.ptr != in_.data() + pos_ + 4 || v == 0 || v > 0x7f) return false;
          out->push_back(static_cast<char>(v));
          pos_ += 4;
          break;
        }
        default:
          return false;
      }
    }
    return false;
  }

  bool ReadBool(bool* out) {
    SkipSpace();
    if (in_.substr(pos_, 4) == "true") {
      pos_ += 4;
      *out = true;
      return true;
    }
    if (in_.substr(pos_, 5) == "false") {
      pos_ += 5;
      *out = false;
      return true;
    }
    return false;
  }

  bool ReadUint(uint64_t* out) {
    SkipSpace();
    auto res = std::from_chars(in_.data() + pos_, in_.data() + in_.size(), *out, 10);
    if (res.ec != std::errc() || res.ptr == in_.data() + pos_) return false;
    pos_ = static_cast<size_t>(res.ptr - in_.data());
    // Reject fractions and exponents rather than truncating them.
    return pos_ >= in_.size() || (in_[pos_] != '.' && in_[pos_] != 'e' && in_[pos_] != 'E');
  }

 private:
  std::string_view in_;
  size_t pos_ = 0;
};

std::string At(const JsonReader& r) { return " at byte " + std::to_string(r.pos()); }

}  // namespace

bool ParseConfig(std::string_view json, Config* config, std::string* error) {
  Config out;
  JsonReader r(json);
  bool have_rules = false;
  if (!r.Consume('{')) {
    *error = "filter_config: want a JSON object" + At(r);
    return false;
  }
  if (!r.Consume('}')) {
    for (;;) {
      std::string key;
      if (!r.ReadString(&key)) {
        *error = "filter_config: want a string key" + At(r);
        return false;
      }
      if (!r.Consume(':')) {
        *error = "filter_config: want ':' after \"" + key + "\"" + At(r);
        return false;
      }
      if (key == "rules_file") {
        if (!r.ReadString(&out.rules_file)) {
          *error = "filter_config: rules_file: want a string" + At(r);
          return false;
        }
        have_rules = true;
      } else if (key == "inspect_response") {
        if (!r.ReadBool(&out.inspect_response)) {
          *error = "filter_config: inspect_response: want true or false" + At(r);
          return false;
        }
      } else if (key == "max_body_bytes") {
        if (!r.ReadUint(&out.max_body_bytes)) {
          *error = "filter_config: max_body_bytes: want a non-negative integer" + At(r);
          return false;
        }
      } else {
        *error = "filter_config: unknown key \"" + key + "\"";
        return false;
      }
      if (r.Consume(',')) continue;
      if (r.Consume('}')) break;
      *error = "filter_config: want ',' or '}'" + At(r);
      return false;
    }
  }
  if (!r.AtEnd()) {
    *error = "filter_config: trailing data" + At(r);
    return false;
  }
  if (!have_rules || out.rules_file.empty()) {
    *error = "filter_config: rules_file: required";
    return false;
  }
  *config = std::move(out);
  return true;
}

// ---------------------------------------------------------------------------
// Engine
// ---------------------------------------------------------------------------

std::unique_ptr<Engine> Engine::Create(const std::string& rules_file, std::string* error, LogFn log) {
  std::unique_ptr<Engine> engine(new Engine());
  try {
    engine->modsec_ = std::make_unique<modsecurity::ModSecurity>();
    engine->modsec_->setConnectorInformation("wafbench-envoy-dynamic-module");
    engine->log_ = std::move(log);
    // Always install a callback: libmodsecurity then never writes to stderr
    // itself, and the text is dropped unless a LogFn was given.
    engine->modsec_->setServerLogCb(&Engine::ServerLogCallback, modsecurity::TextLogProperty);
    engine->rules_ = std::make_unique<modsecurity::RulesSet>();
    int n = engine->rules_->loadFromUri(rules_file.c_str());
    if (n < 0) {
      *error = "rules_file " + rules_file + ": " + engine->rules_->getParserError();
      return nullptr;
    }
    size_t total = 0;
    for (int phase = 0; phase < modsecurity::Phases::NUMBER_OF_PHASES; ++phase) {
      total += engine->rules_->m_rulesSetPhases.at(phase)->size();
    }
    engine->num_rules_ = total;
  } catch (const std::exception& e) {
    *error = "rules_file " + rules_file + ": " + e.what();
    return nullptr;
  }
  return engine;
}

Engine::~Engine() = default;

void Engine::ServerLogCallback(void* data, const void* message) {
  auto* engine = static_cast<Engine*>(data);
  if (engine != nullptr && engine->log_ && message != nullptr) {
    engine->log_(static_cast<const char*>(message));
  }
}

std::unique_ptr<Transaction> Engine::NewTransaction() {
  auto txn = std::make_unique<modsecurity::Transaction>(modsec_.get(), rules_.get(), this);
  return std::unique_ptr<Transaction>(new Transaction(std::move(txn)));
}

// ---------------------------------------------------------------------------
// Transaction
// ---------------------------------------------------------------------------

Transaction::Transaction(std::unique_ptr<modsecurity::Transaction> txn) : txn_(std::move(txn)) {}

Transaction::~Transaction() = default;

Verdict Transaction::CheckIntervention() {
  modsecurity::ModSecurityIntervention it;
  modsecurity::intervention::clean(&it);
  Verdict v;
  if (txn_->intervention(&it) && it.disruptive) {
    // A deny without an explicit status leaves the default 200 in place.
    v.status = (it.status >= 300 && it.status <= 599) ? it.status : 403;
  }
  modsecurity::intervention::free(&it);
  return v;
}

template <typename F>
Verdict Transaction::Run(F&& step) {
  try {
    step();
    return CheckIntervention();
  } catch (...) {
    engine_error_ = true;
    return Verdict{500};
  }
}

Verdict Transaction::ProcessConnection(const std::string& client_ip, int client_port, const std::string& server_ip,
                                       int server_port) {
  return Run([&] { txn_->processConnection(client_ip.c_str(), client_port, server_ip.c_str(), server_port); });
}

Verdict Transaction::ProcessUri(const std::string& uri, const std::string& method, const std::string& http_version) {
  return Run([&] { txn_->processURI(uri.c_str(), method.c_str(), http_version.c_str()); });
}

void Transaction::AddRequestHeader(std::string_view name, std::string_view value) {
  try {
    txn_->addRequestHeader(reinterpret_cast<const unsigned char*>(name.data()), name.size(),
                           reinterpret_cast<const unsigned char*>(value.data()), value.size());
  } catch (...) {
    engine_error_ = true;
  }
}

Verdict Transaction::ProcessRequestHeaders() {
  return Run([&] { txn_->processRequestHeaders(); });
}

Verdict Transaction::AppendRequestBody(const char* data, size_t len) {
  if (len == 0) return Verdict{};
  return Run([&] { txn_->appendRequestBody(reinterpret_cast<const unsigned char*>(data), len); });
}

Verdict Transaction::ProcessRequestBody() {
  return Run([&] { txn_->processRequestBody(); });
}

void Transaction::AddResponseHeader(std::string_view name, std::string_view value) {
  try {
    txn_->addResponseHeader(reinterpret_cast<const unsigned char*>(name.data()), name.size(),
                            reinterpret_cast<const unsigned char*>(value.data()), value.size());
  } catch (...) {
    engine_error_ = true;
  }
}

Verdict Transaction::ProcessResponseHeaders(int status, const std::string& protocol) {
  return Run([&] { txn_->processResponseHeaders(status, protocol); });
}

void Transaction::ProcessLogging() {
  try {
    txn_->processLogging();
  } catch (...) {
    engine_error_ = true;
  }
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

int Evaluate(Engine& engine, const Request& request) {
  auto txn = engine.NewTransaction();
  Verdict v = txn->ProcessConnection(request.client_ip, request.client_port, request.server_ip, request.server_port);
  if (!v.blocked()) v = txn->ProcessUri(request.uri, request.method, request.http_version);
  if (!v.blocked()) {
    for (const auto& h : request.headers) txn->AddRequestHeader(h.first, h.second);
    v = txn->ProcessRequestHeaders();
  }
  if (!v.blocked()) v = txn->AppendRequestBody(request.body.data(), request.body.size());
  if (!v.blocked()) v = txn->ProcessRequestBody();
  txn->ProcessLogging();
  if (txn->engine_error()) return 500;
  return v.blocked() ? v.status : 200;
}

void SplitHostPort(std::string_view address, std::string* host, int* port) {
  std::string_view h = address;
  std::string_view p;
  if (!address.empty() && address.front() == '[') {
    size_t close = address.find(']');
    if (close != std::string_view::npos) {
      h = address.substr(1, close - 1);
      if (close + 1 < address.size() && address[close + 1] == ':') p = address.substr(close + 2);
    }
  } else {
    size_t colon = address.rfind(':');
    // Exactly one colon: IPv4 or name with port. More: bare IPv6, no port.
    if (colon != std::string_view::npos && address.find(':') == colon) {
      h = address.substr(0, colon);
      p = address.substr(colon + 1);
    }
  }
  host->assign(h.data(), h.size());
  int value = 0;
  auto res = std::from_chars(p.data(), p.data() + p.size(), value, 10);
  if (!p.empty() && res.ec == std::errc() && res.ptr == p.data() + p.size() && value >= 0 && value <= 65535) {
    *port = value;
  }
}

}  // namespace modsec
}  // namespace wafbench
