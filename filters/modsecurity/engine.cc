#include "engine.h"

#include <limits.h>
#include <modsecurity/intervention.h>
#include <modsecurity/modsecurity.h>
#include <modsecurity/rule_message.h>
#if MODSECURITY_VERSION_NUM >= 30140000
#include <modsecurity/rule_with_actions.h>
#endif
#include <modsecurity/rules_set.h>
#include <modsecurity/transaction.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <wordexp.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <exception>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace wafbench {
namespace modsec {

// ---------------------------------------------------------------------------
// Config parsing (nlohmann/json)
// ---------------------------------------------------------------------------

bool ParseConfig(std::string_view json, Config* config, std::string* error) {
  try {
    // Repeated keys: nlohmann keeps the last silently; refuse them instead.
    std::set<std::string> seen;
    std::string repeated;
    nlohmann::json::parser_callback_t on_event = [&](int depth, nlohmann::json::parse_event_t event,
                                                     nlohmann::json& parsed) {
      if (event == nlohmann::json::parse_event_t::key && depth == 1 && parsed.is_string()) {
        const auto& key = parsed.get_ref<const std::string&>();
        if (!seen.insert(key).second && repeated.empty()) repeated = key;
      }
      return true;
    };
    nlohmann::json doc;
    try {
      doc = nlohmann::json::parse(json.begin(), json.end(), on_event);
    } catch (const nlohmann::json::parse_error& e) {
      *error = std::string("filter_config: not JSON: ") + e.what();
      return false;
    }
    if (!doc.is_object()) {
      *error = std::string("filter_config: want a JSON object, got ") + doc.type_name();
      return false;
    }
    if (!repeated.empty()) {
      *error = "filter_config: key \"" + repeated + "\" given twice";
      return false;
    }
    Config out;
    bool have_rules = false;
    for (const auto& [key, value] : doc.items()) {
      if (key == "rules_file") {
        if (!value.is_string()) {
          *error = std::string("filter_config: rules_file: want a string, got ") + value.type_name();
          return false;
        }
        out.rules_file = value.get<std::string>();
        if (out.rules_file.find('\0') != std::string::npos) {
          *error = "filter_config: rules_file: contains a NUL byte";
          return false;
        }
        have_rules = true;
      } else if (key == "inspect_response") {
        if (!value.is_boolean()) {
          *error = std::string("filter_config: inspect_response: want true or false, got ") + value.type_name();
          return false;
        }
        out.inspect_response = value.get<bool>();
      } else if (key == "max_body_bytes") {
        // A negative integer is number_integer and a fraction number_float.
        if (!value.is_number_unsigned()) {
          *error = "filter_config: max_body_bytes: want a non-negative integer, got " + value.dump();
          return false;
        }
        out.max_body_bytes = value.get<uint64_t>();
      } else if (key == "match_log") {
        if (!value.is_boolean()) {
          *error = std::string("filter_config: match_log: want true or false, got ") + value.type_name();
          return false;
        }
        out.match_log = value.get<bool>();
      } else {
        *error = "filter_config: unknown key \"" + key + "\"";
        return false;
      }
    }
    if (!have_rules || out.rules_file.empty()) {
      *error = "filter_config: rules_file: required";
      return false;
    }
    *config = std::move(out);
    return true;
  } catch (const std::exception& e) {
    *error = std::string("filter_config: ") + e.what();
    return false;
  }
}

// ---------------------------------------------------------------------------
// Rule-file check: no Lua, no remote rules
// ---------------------------------------------------------------------------

namespace {

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

bool IStartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && IEquals(s.substr(0, prefix.size()), prefix);
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// SplitArgs splits a directive line into words the way SecLang does: words
// separated by blanks, or double-quoted with backslash escapes (the quotes
// are dropped, escapes kept as written).
std::vector<std::string> SplitArgs(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) break;
    std::string word;
    if (line[i] == '"') {
      ++i;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\' && i + 1 < line.size()) word.push_back(line[i++]);
        word.push_back(line[i++]);
      }
      ++i;  // closing quote
    } else {
      while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) word.push_back(line[i++]);
    }
    out.push_back(std::move(word));
  }
  return out;
}

// HasExecAction reports whether an action list ("id:1,phase:2,exec:/x.lua")
// names the action exec. Commas inside single-quoted values do not split.
bool HasExecAction(std::string_view actions) {
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i <= actions.size(); ++i) {
    if (i < actions.size()) {
      char c = actions[i];
      if (c == '\\') {
        ++i;
        continue;
      }
      if (c == '\'') quoted = !quoted;
      if (quoted || c != ',') continue;
    }
    std::string_view action = TrimSpace(actions.substr(start, i - start));
    std::string_view name = TrimSpace(action.substr(0, action.find(':')));
    if (IEquals(name, "exec")) return true;
    start = i + 1;
  }
  return false;
}

// ExpandInclude resolves an Include argument as libmodsecurity does: the
// path as given, else relative to the including file's directory; shell
// wildcards and variables are expanded (no command substitution).
std::vector<std::string> ExpandInclude(const std::string& arg, const std::string& includer) {
  std::vector<std::string> candidates = {arg};
  if (!arg.empty() && arg[0] != '/') {
    size_t slash = includer.rfind('/');
    candidates.push_back((slash == std::string::npos ? std::string(".") : includer.substr(0, slash)) + "/" + arg);
  }
  for (const auto& c : candidates) {
    std::vector<std::string> files;
    wordexp_t we;
    if (wordexp(c.c_str(), &we, WRDE_NOCMD) == 0) {
      for (size_t i = 0; i < we.we_wordc; ++i) {
        struct stat st;
        if (stat(we.we_wordv[i], &st) == 0 && S_ISREG(st.st_mode)) files.emplace_back(we.we_wordv[i]);
      }
      wordfree(&we);
    }
    if (!files.empty()) return files;
  }
  return {};
}

class RulesChecker {
 public:
  bool CheckFile(const std::string& path, std::string* error, int depth) {
    if (depth > 32) {
      *error = path + ": Include nested deeper than 32 files";
      return false;
    }
    char resolved[PATH_MAX];
    std::string key = realpath(path.c_str(), resolved) != nullptr ? std::string(resolved) : path;
    if (!visited_.insert(key).second) return true;
    std::ifstream in(path, std::ios::binary);
    if (!in) return true;  // libmodsecurity reports unreadable files itself
    std::string line, logical;
    int lineno = 0, first = 0;
    while (std::getline(in, line)) {
      ++lineno;
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (logical.empty()) {
        first = lineno;
        std::string_view t = TrimSpace(line);
        if (t.empty() || t.front() == '#') continue;
      }
      if (!line.empty() && line.back() == '\\') {
        line.pop_back();
        logical += line;
        logical.push_back(' ');
        continue;
      }
      logical += line;
      if (!CheckDirective(logical, path, first, error, depth)) return false;
      logical.clear();
    }
    if (!logical.empty() && !CheckDirective(logical, path, first, error, depth)) return false;
    return true;
  }

 private:
  bool CheckDirective(const std::string& line, const std::string& path, int lineno, std::string* error, int depth) {
    std::vector<std::string> args = SplitArgs(line);
    if (args.empty()) return true;
    const std::string where = path + ":" + std::to_string(lineno) + ": ";
    const std::string& d = args[0];
    if (IEquals(d, "SecRuleScript")) {
      *error = where + "SecRuleScript (Lua) is not allowed: Lua would run on Envoy's LuaJIT";
      return false;
    }
    if (IEquals(d, "SecRemoteRules")) {
      *error = where + "SecRemoteRules is not allowed: remote rules cannot be checked for Lua";
      return false;
    }
    if (IEquals(d, "Include")) {
      if (args.size() < 2) return true;  // libmodsecurity reports the syntax error
      for (const auto& f : ExpandInclude(args[1], path)) {
        if (!CheckFile(f, error, depth + 1)) return false;
      }
      return true;
    }
    // Position of the action list for each directive that takes one.
    size_t actions = 0;
    if (IEquals(d, "SecRule")) {
      actions = 3;
      std::string_view op = args.size() > 2 ? TrimSpace(args[2]) : std::string_view();
      if (!op.empty() && op.front() == '!') op = TrimSpace(op.substr(1));
      if (IStartsWith(op, "@inspectFile")) {
        *error = where + "operator @inspectFile is not allowed: it runs scripts (Lua) on Envoy's LuaJIT";
        return false;
      }
    } else if (IEquals(d, "SecAction") || IEquals(d, "SecDefaultAction")) {
      actions = 1;
    } else if (IEquals(d, "SecRuleUpdateActionById")) {
      actions = 2;
    }
    // Every word from the action list on: libmodsecurity would refuse extra
    // words anyway, and this way no spelling of the line slips through.
    for (size_t i = actions; actions != 0 && i < args.size(); ++i) {
      if (HasExecAction(args[i])) {
        *error = where + "action exec: is not allowed: it runs Lua on Envoy's LuaJIT";
        return false;
      }
    }
    return true;
  }

  std::set<std::string> visited_;
};

}  // namespace

bool CheckRules(const std::string& rules_file, std::string* error) {
  try {
    RulesChecker checker;
    return checker.CheckFile(rules_file, error, 0);
  } catch (const std::exception& e) {
    *error = rules_file + ": checking rules: " + e.what();
    return false;
  }
}

// ---------------------------------------------------------------------------
// Engine
// ---------------------------------------------------------------------------

namespace {

// VersionFromWhoAmI extracts "3.0.9" from "ModSecurity v3.0.9 (Linux)".
std::string VersionFromWhoAmI(const std::string& who) {
  size_t v = who.find(" v");
  if (v == std::string::npos) return who;
  size_t end = who.find(' ', v + 2);
  return who.substr(v + 2, end == std::string::npos ? std::string::npos : end - (v + 2));
}

// Transaction IDs: thread number and a per-thread sequence, so IDs are
// unique in the process and no lock or shared cache line is touched per
// request. Without an ID libmodsecurity 3.0.x seeds std::random_device and
// std::mt19937 for every transaction to make one.
std::atomic<uint32_t> next_thread_number{1};
thread_local uint32_t thread_number = 0;
thread_local uint64_t thread_sequence = 0;

}  // namespace

std::unique_ptr<Engine> Engine::Create(const std::string& rules_file, std::string* error, Logger log) {
  try {
    if (!CheckRules(rules_file, error)) {
      *error = "rules_file " + rules_file + ": " + *error;
      return nullptr;
    }
    std::unique_ptr<Engine> engine(new Engine());
    engine->modsec_ = std::make_unique<modsecurity::ModSecurity>();
    engine->modsec_->setConnectorInformation("wafbench-envoy-dynamic-module");
    engine->version_ = VersionFromWhoAmI(engine->modsec_->whoAmI());
    engine->log_ = std::move(log);
    // Always install a callback: libmodsecurity then never writes to stderr
    // itself. With the rule-message property it hands over the parsed
    // message, and text is formatted only when someone will read it.
#ifdef WAFBENCH_NO_MATCH_LOG
    // The match_log cost check's variant (README "match_log"): the switch
    // compiled out, the callback every measured trial installs.
    engine->modsec_->setServerLogCb(&Engine::ServerLogCallback, modsecurity::RuleMessageLogProperty);
#else
    engine->modsec_->setServerLogCb(engine->log_.match_lines ? &Engine::MatchLogCallback : &Engine::ServerLogCallback,
                                    modsecurity::RuleMessageLogProperty);
#endif
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
    engine->response_body_access_ =
        engine->rules_->m_secResponseBodyAccess == modsecurity::RulesSetProperties::TrueConfigBoolean;
    if (engine->rules_->m_responseBodyLimit.m_set && engine->rules_->m_responseBodyLimit.m_value > 0) {
      engine->response_body_limit_ = static_cast<uint64_t>(engine->rules_->m_responseBodyLimit.m_value);
    }
    return engine;
  } catch (const std::exception& e) {
    *error = "rules_file " + rules_file + ": " + e.what();
    return nullptr;
  } catch (...) {
    *error = "rules_file " + rules_file + ": unknown exception while loading";
    return nullptr;
  }
}

Engine::~Engine() = default;

void Engine::ServerLogCallback(void* data, const void* message) {
  auto* engine = static_cast<Engine*>(data);
  if (engine == nullptr || message == nullptr || !engine->log_.write) return;
  if (engine->log_.enabled && !engine->log_.enabled()) return;
  // libmodsecurity 3.0.9 passes RuleMessage*, 3.0.13+ const RuleMessage*;
  // log() does not modify the message in either.
  auto* rm = static_cast<modsecurity::RuleMessage*>(const_cast<void*>(message));
  engine->log_.write(rm->log());
}

#ifndef WAFBENCH_NO_MATCH_LOG
void Engine::MatchLogCallback(void* data, const void* message) {
  auto* engine = static_cast<Engine*>(data);
  if (engine == nullptr || message == nullptr || !engine->log_.write) return;
  const auto* rm = static_cast<const modsecurity::RuleMessage*>(message);
#if MODSECURITY_VERSION_NUM >= 30140000
  // 3.0.14 holds the rule and the transaction by reference (no copies of
  // the rule id or the transaction id in the message).
  engine->log_.write(MatchLine(rm->m_rule.m_ruleId, rm->m_message, rm->m_data, rm->m_transaction.m_id));
#else
  engine->log_.write(MatchLine(rm->m_ruleId, rm->m_message, rm->m_data,
                               rm->m_id != nullptr ? std::string_view(*rm->m_id) : std::string_view()));
#endif
}

// With SecRuleEngine On, libmodsecurity hands a matched rule with a
// disruptive action to the log callback only once it is no longer
// disruptive; CRS's detection rules say `block`, so in blocking mode none
// of their matches reached match_log and a denied request named no rule
// (in DetectionOnly they arrive as usual). The transaction keeps every
// rule message: when it is interrupted, the ones the callback did not get
// are logged from there, once.
void Engine::LogInterrupting(const modsecurity::Transaction& txn) const {
  if (!log_.match_lines || !log_.write) return;
  for (const auto& rm : txn.m_rulesMessages) {
    if (rm.m_isDisruptive && rm.m_saveMessage) MatchLogCallback(const_cast<Engine*>(this), &rm);
  }
}
#endif

namespace {

void AppendQuoted(std::string* out, std::string_view name, std::string_view value) {
  out->append(" [");
  out->append(name);
  out->append(" \"");
  for (char c : value) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      default:
        out->push_back(c);
    }
  }
  out->append("\"]");
}

}  // namespace

std::string MatchLine(int64_t rule_id, std::string_view msg, std::string_view data, std::string_view tx) {
  std::string out(kMatchLinePrefix);
  out.reserve(out.size() + msg.size() + data.size() + tx.size() + 48);
  AppendQuoted(&out, "id", std::to_string(rule_id));
  AppendQuoted(&out, "msg", msg);
  AppendQuoted(&out, "data", data);
  AppendQuoted(&out, "tx", tx);
  return out;
}

std::unique_ptr<Transaction> Engine::NewTransaction() {
  if (thread_number == 0) thread_number = next_thread_number.fetch_add(1, std::memory_order_relaxed);
  // "<thread>-<sequence>": at most 10 + 1 + 20 digits.
  char id[40];
  auto r = std::to_chars(id, id + sizeof(id) - 1, thread_number);
  *r.ptr++ = '-';
  r = std::to_chars(r.ptr, id + sizeof(id) - 1, ++thread_sequence);
  *r.ptr = '\0';
  auto txn = std::make_unique<modsecurity::Transaction>(modsec_.get(), rules_.get(), id, this);
  return std::unique_ptr<Transaction>(new Transaction(std::move(txn), this));
}

// ---------------------------------------------------------------------------
// Transaction
// ---------------------------------------------------------------------------

Transaction::Transaction(std::unique_ptr<modsecurity::Transaction> txn, const Engine* engine)
    : txn_(std::move(txn)), engine_(engine) {}

Transaction::~Transaction() = default;

Verdict Transaction::CheckIntervention() {
  modsecurity::ModSecurityIntervention it;
  modsecurity::intervention::clean(&it);
  // Not disruptive: libmodsecurity copied nothing, so there is nothing to free.
  if (!txn_->intervention(&it)) return Verdict{};
#ifndef WAFBENCH_NO_MATCH_LOG
  if (!interrupted_) engine_->LogInterrupting(*txn_);
#endif
  interrupted_ = true;
  Verdict v;
  // A deny without an explicit status leaves the default 200 in place.
  v.status = (it.status >= 300 && it.status <= 599) ? it.status : 403;
  modsecurity::intervention::free(&it);
  return v;
}

template <typename F>
Verdict Transaction::Run(F&& step) {
  if (engine_error_) return Verdict{500};
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
  if (engine_error_) return;
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
  if (len == 0 && !engine_error_) return Verdict{};
  return Run([&] { txn_->appendRequestBody(reinterpret_cast<const unsigned char*>(data), len); });
}

Verdict Transaction::ProcessRequestBody() {
  return Run([&] { txn_->processRequestBody(); });
}

void Transaction::AddResponseHeader(std::string_view name, std::string_view value) {
  if (engine_error_) return;
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

Verdict Transaction::AppendResponseBody(const char* data, size_t len) {
  if (len == 0 && !engine_error_) return Verdict{};
  return Run([&] { txn_->appendResponseBody(reinterpret_cast<const unsigned char*>(data), len); });
}

Verdict Transaction::ProcessResponseBody() {
  return Run([&] { txn_->processResponseBody(); });
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
  try {
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
  } catch (...) {
    return 500;  // the transaction could not be created: fail closed
  }
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
