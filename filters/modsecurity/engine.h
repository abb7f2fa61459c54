// Package-level overview: the libmodsecurity engine wrapper of the wafbench
// ModSecurity filter. Nothing here depends on Envoy, so it is unit-tested and
// benchmarked on its own (engine_test.cc, engine_c.h).
#ifndef WAFBENCH_FILTERS_MODSECURITY_ENGINE_H_
#define WAFBENCH_FILTERS_MODSECURITY_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace modsecurity {
class ModSecurity;
class RulesSet;
class Transaction;
}  // namespace modsecurity

namespace wafbench {
namespace modsec {

// Config is the filter configuration, parsed from the filter_config JSON.
struct Config {
  std::string rules_file;
  bool inspect_response = false;
  uint64_t max_body_bytes = 1048576;
  // match_log: every rule match that libmodsecurity logs becomes one
  // MatchLine at info level (the CRS conformance runs; README "match_log").
  bool match_log = false;
};

// ParseConfig parses a flat JSON object with the keys rules_file (string,
// required), inspect_response (bool), max_body_bytes (non-negative
// integer) and match_log (bool), using nlohmann/json. Unknown and repeated keys are errors. On
// failure it returns false and sets *error to a message naming the offending
// key or position. It never throws.
bool ParseConfig(std::string_view json, Config* config, std::string* error);

// CheckRules refuses rule files that would make libmodsecurity run Lua or
// fetch rules it cannot show us: the directives SecRuleScript and
// SecRemoteRules, the action exec: (in SecRule, SecAction, SecDefaultAction
// and SecRuleUpdateActionById) and the operator @inspectFile. It reads
// rules_file and every file it Includes (recursively, with the same path
// rules as libmodsecurity: as given, then relative to the including file;
// wildcards expanded), before libmodsecurity parses anything, because
// libmodsecurity compiles Lua scripts while it parses. Lua must never run in
// Envoy: Envoy's executable exports LuaJIT, and libmodsecurity's Lua 5.3
// references bind to it (README.md, "Lua symbols"). On refusal it returns
// false and sets *error to "file:line: what". A file that cannot be read is
// not an error here (libmodsecurity reports it when it loads).
bool CheckRules(const std::string& rules_file, std::string* error);

// Verdict is the outcome of one processing step. status == 0 means "no
// intervention, continue"; otherwise it is the HTTP status to answer with.
struct Verdict {
  int status = 0;
  bool blocked() const { return status != 0; }
};

// Logger receives ModSecurity's server log lines (rule matches). enabled is
// asked first, for every match; only when it returns true is the line
// formatted and passed to write. Either may be empty: no enabled means
// always, no write means never. With match_lines, write gets one MatchLine
// per match instead of libmodsecurity's own text, and enabled is not asked;
// Engine::Create then installs a different callback, so the path without
// match_lines runs exactly the instructions it ran before match_lines
// existed.
struct Logger {
  std::function<bool()> enabled;
  std::function<void(std::string_view line)> write;
  bool match_lines = false;
};

// kMatchLinePrefix starts every MatchLine.
constexpr std::string_view kMatchLinePrefix = "wafbench-match";

// MatchLine is the line the CRS conformance runner parses for one rule
// match: wafbench-match [id "<id>"] [msg "<msg>"] [data "<data>"] [tx "<tx>"],
// with '"' and '\\' in values escaped as \" and \\, and newlines as \n
// (the contract shared with the Coraza filters, filters/coraza/engine).
std::string MatchLine(int64_t rule_id, std::string_view msg, std::string_view data, std::string_view tx);

class Transaction;

// Engine owns one ModSecurity instance and one loaded rule set. It is created
// once per filter configuration and shared (read-only) by all transactions.
class Engine {
 public:
  // Create checks rules_file with CheckRules and loads it. On failure
  // returns nullptr and sets *error to the refusal or the libmodsecurity
  // parser error. It never throws.
  static std::unique_ptr<Engine> Create(const std::string& rules_file, std::string* error, Logger log = {});
  ~Engine();

  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // NewTransaction starts the processing of one request. Safe to call from
  // several threads at once. The transaction gets an ID from a per-thread
  // counter, so libmodsecurity does not draw one from a random generator.
  // Throws (e.g. std::bad_alloc) only when the transaction cannot be created.
  std::unique_ptr<Transaction> NewTransaction();

  // NumRules is the number of rules loaded over all phases.
  size_t NumRules() const { return num_rules_; }

  // Version is libmodsecurity's version at run time, e.g. "3.0.9" (from
  // ModSecurity::whoAmI, "ModSecurity v3.0.9 (Linux)").
  const std::string& Version() const { return version_; }

  // ResponseBodyAccess reports whether the rules set SecResponseBodyAccess
  // On: only then does a filter buffer response bodies for phase 4.
  bool ResponseBodyAccess() const { return response_body_access_; }
  // ResponseBodyLimit is SecResponseBodyLimit in bytes, or 0 when the rules
  // do not set it.
  uint64_t ResponseBodyLimit() const { return response_body_limit_; }

 private:
  Engine() = default;
  friend class Transaction;
  static void ServerLogCallback(void* data, const void* message);
  static void MatchLogCallback(void* data, const void* message);
  // LogInterrupting writes, with match_log on, the match lines of txn's
  // rule messages that libmodsecurity kept from the log callback.
  void LogInterrupting(const modsecurity::Transaction& txn) const;

  std::unique_ptr<modsecurity::ModSecurity> modsec_;
  std::unique_ptr<modsecurity::RulesSet> rules_;
  Logger log_;
  size_t num_rules_ = 0;
  std::string version_;
  bool response_body_access_ = false;
  uint64_t response_body_limit_ = 0;
};

// Transaction wraps one modsecurity::Transaction. Methods that run a
// ModSecurity phase return the resulting Verdict. No method throws: any
// exception (from libmodsecurity or from the wrapper, e.g. std::bad_alloc)
// sets engine_error(), and from then on every phase answers status 500
// without running (fail closed).
class Transaction {
 public:
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;

  // ProcessConnection records the client and server endpoints.
  Verdict ProcessConnection(const std::string& client_ip, int client_port, const std::string& server_ip,
                            int server_port);
  // ProcessUri records the request line; http_version is e.g. "1.1".
  Verdict ProcessUri(const std::string& uri, const std::string& method, const std::string& http_version);
  void AddRequestHeader(std::string_view name, std::string_view value);
  // ProcessRequestHeaders runs phase 1.
  Verdict ProcessRequestHeaders();
  // AppendRequestBody feeds body bytes (libmodsecurity may intervene when its
  // own SecRequestBodyLimit is exceeded).
  Verdict AppendRequestBody(const char* data, size_t len);
  // ProcessRequestBody runs phase 2; call it even for requests without body.
  Verdict ProcessRequestBody();
  void AddResponseHeader(std::string_view name, std::string_view value);
  // ProcessResponseHeaders runs phase 3.
  Verdict ProcessResponseHeaders(int status, const std::string& protocol);
  // AppendResponseBody feeds response body bytes (libmodsecurity keeps at
  // most SecResponseBodyLimit of them, and only for the content types
  // SecResponseBodyMimeType names).
  Verdict AppendResponseBody(const char* data, size_t len);
  // ProcessResponseBody runs phase 4 (after ProcessResponseHeaders).
  Verdict ProcessResponseBody();
  // ProcessLogging runs phase 5.
  void ProcessLogging();

  // engine_error reports whether any step threw.
  bool engine_error() const { return engine_error_; }

 private:
  friend class Engine;
  Transaction(std::unique_ptr<modsecurity::Transaction> txn, const Engine* engine);
  Verdict CheckIntervention();
  template <typename F>
  Verdict Run(F&& step);

  std::unique_ptr<modsecurity::Transaction> txn_;
  const Engine* engine_;
  bool engine_error_ = false;
  bool interrupted_ = false;  // the first intervention's matches are logged
};

// Request is a complete request for one-shot evaluation.
struct Request {
  std::string method = "GET";
  std::string uri = "/";
  std::string http_version = "1.1";
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  std::string client_ip = "127.0.0.1";
  int client_port = 40000;
  std::string server_ip = "127.0.0.1";
  int server_port = 10000;
};

// Evaluate runs a whole request (phases 1, 2 and logging) the way the Envoy
// filter does and returns the final status: 200 when allowed, otherwise the
// intervention status (500 on engine error).
int Evaluate(Engine& engine, const Request& request);

// SplitHostPort splits "1.2.3.4:80" or "[::1]:80" into host and port. Without
// a port, *port is left unchanged and host is the whole input.
void SplitHostPort(std::string_view address, std::string* host, int* port);

}  // namespace modsec
}  // namespace wafbench

#endif  // WAFBENCH_FILTERS_MODSECURITY_ENGINE_H_
