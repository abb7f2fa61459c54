#include "engine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "engine_c.h"
#include "engine_tx_c.h"

#ifndef WAFBENCH_TESTDATA
#error "WAFBENCH_TESTDATA must name the testdata directory"
#endif

namespace wafbench {
namespace modsec {
namespace {

const std::string kRules = std::string(WAFBENCH_TESTDATA) + "/rules.conf";

TEST(ParseConfig, Table) {
  struct Case {
    std::string name, json;
    bool ok;
    std::string rules;
    bool inspect;
    uint64_t max_body;
    std::string err_has;
  };
  const Case cases[] = {
      {"full", R"({"rules_file": "/abs/main.conf", "inspect_response": true, "max_body_bytes": 4096})", true,
       "/abs/main.conf", true, 4096, ""},
      {"defaults", R"( {"rules_file":"/r.conf"} )", true, "/r.conf", false, 1048576, ""},
      {"escapes", R"({"rules_file":"/a\/b\u0041\\c"})", true, "/a/bA\\c", false, 1048576, ""},
      {"missing_rules", R"({"inspect_response": false})", false, "", false, 0, "rules_file: required"},
      {"unknown_key", R"({"rules_file":"/r","rule_file":"/x"})", false, "", false, 0, "unknown key \"rule_file\""},
      {"bad_bool", R"({"rules_file":"/r","inspect_response":"yes"})", false, "", false, 0, "inspect_response"},
      {"negative", R"({"rules_file":"/r","max_body_bytes":-1})", false, "", false, 0, "max_body_bytes"},
      {"fraction", R"({"rules_file":"/r","max_body_bytes":1.5})", false, "", false, 0, "max_body_bytes"},
      {"not_object", R"(["rules_file"])", false, "", false, 0, "want a JSON object, got array"},
      {"trailing", R"({"rules_file":"/r"} x)", false, "", false, 0, "expected end of input"},
      {"unterminated", R"({"rules_file":"/r)", false, "", false, 0, "missing closing quote"},
      {"empty", "", false, "", false, 0, "unexpected end of input"},
      {"repeated_key", R"({"rules_file":"/a","rules_file":"/b"})", false, "", false, 0, "\"rules_file\" given twice"},
      {"nul_in_path", R"({"rules_file":"/a\u0000b"})", false, "", false, 0, "NUL"},
      {"rules_not_string", R"({"rules_file":7})", false, "", false, 0, "rules_file: want a string, got number"},
      {"body_too_big", R"({"rules_file":"/r","max_body_bytes":18446744073709551616})", false, "", false, 0,
       "max_body_bytes"},
      {"body_max_u64", R"({"rules_file":"/r","max_body_bytes":18446744073709551615})", true, "/r", false,
       18446744073709551615u, ""},
      {"body_object", R"({"rules_file":"/r","max_body_bytes":{}})", false, "", false, 0, "max_body_bytes"},
      {"bad_utf8", "{\"rules_file\":\"/\xff\"}", false, "", false, 0, "not JSON"},
      {"empty_rules", R"({"rules_file":""})", false, "", false, 0, "rules_file: required"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Config got;
    std::string err;
    bool ok = ParseConfig(c.json, &got, &err);
    ASSERT_EQ(ok, c.ok) << err;
    if (ok) {
      EXPECT_EQ(got.rules_file, c.rules);
      EXPECT_EQ(got.inspect_response, c.inspect);
      EXPECT_EQ(got.max_body_bytes, c.max_body);
    } else {
      EXPECT_NE(err.find(c.err_has), std::string::npos) << err;
    }
  }
}

TEST(SplitHostPort, Table) {
  struct Case {
    std::string in, host;
    int port;
  };
  const Case cases[] = {
      {"127.0.0.1:8080", "127.0.0.1", 8080}, {"[::1]:443", "::1", 443},           {"::1", "::1", -1},
      {"10.0.0.1", "10.0.0.1", -1},          {"1.2.3.4:notaport", "1.2.3.4", -1}, {"", "", -1},
  };
  for (const auto& c : cases) {
    std::string host;
    int port = -1;
    SplitHostPort(c.in, &host, &port);
    EXPECT_EQ(host, c.host) << c.in;
    EXPECT_EQ(port, c.port) << c.in;
  }
}

TEST(Engine, MissingRulesFile) {
  std::string err;
  auto e = Engine::Create("/nonexistent/wafbench.conf", &err);
  EXPECT_EQ(e, nullptr);
  EXPECT_NE(err.find("/nonexistent/wafbench.conf"), std::string::npos) << err;
}

TEST(Engine, BadRuleSyntax) {
  std::string path = ::testing::TempDir() + "wafbench_bad_rules.conf";
  {
    std::ofstream f(path);
    f << "SecRuleEngine On\nSecNoSuchDirective On\n";
  }
  std::string err;
  auto e = Engine::Create(path, &err);
  EXPECT_EQ(e, nullptr);
  EXPECT_FALSE(err.empty());
  std::remove(path.c_str());
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string err;
    engine_ = Engine::Create(kRules, &err);
    ASSERT_NE(engine_, nullptr) << err;
  }
  static Request Browser(const std::string& method, const std::string& uri) {
    Request r;
    r.method = method;
    r.uri = uri;
    r.headers = {{"Host", "localhost"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}};
    return r;
  }
  std::unique_ptr<Engine> engine_;
};

TEST_F(EngineTest, LoadsRules) { EXPECT_GE(engine_->NumRules(), 6u); }

// Recorded requests of the benchmark workloads.
TEST_F(EngineTest, RecordedRequests) {
  struct Case {
    std::string name;
    Request req;
    int want;
  };
  Request sqli = Browser("POST", "/attack");
  sqli.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  sqli.body = "user=1234+OR+1%3D1";
  Request phase1 = Browser("GET", "/safe");
  phase1.headers.emplace_back("X-WAF-Benchmark", "phase1-block");
  Request json = Browser("POST", "/json");
  json.headers.emplace_back("Content-Type", "application/json");
  json.body = R"({"message":")" + std::string(4096 - 14, 'c') + R"("})";
  ASSERT_EQ(json.body.size(), 4096u);
  Request json_bad = json;
  json_bad.body = R"({"message":"evil-json-marker"})";
  Request form = Browser("POST", "/form");
  form.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  form.body = "value=" + std::string(1018, 'b');

  const Case cases[] = {
      {"benign_get", Browser("GET", "/safe"), 200},
      {"clean_query", Browser("GET", "/search?q=normal-value-normal-value"), 200},
      {"form_1k", form, 200},
      {"sqli_post", sqli, 403},
      {"xss_get", Browser("GET", "/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E"), 403},
      {"phase1_block", phase1, 403},
      {"json_4k", json, 200},
      {"json_rule", json_bad, 403},
      {"deny_default_status", Browser("GET", "/deny-default"), 403},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(Evaluate(*engine_, c.req), c.want) << c.name;
  }
}

TEST_F(EngineTest, Phase1BlocksBeforeBody) {
  auto txn = engine_->NewTransaction();
  EXPECT_FALSE(txn->ProcessConnection("127.0.0.1", 1234, "127.0.0.1", 80).blocked());
  EXPECT_FALSE(txn->ProcessUri("/safe", "GET", "1.1").blocked());
  txn->AddRequestHeader("Host", "localhost");
  txn->AddRequestHeader("X-WAF-Benchmark", "phase1-block");
  Verdict v = txn->ProcessRequestHeaders();
  EXPECT_EQ(v.status, 403);
  txn->ProcessLogging();
  EXPECT_FALSE(txn->engine_error());
}

TEST_F(EngineTest, SqliBlocksOnlyInPhase2) {
  auto txn = engine_->NewTransaction();
  txn->ProcessConnection("127.0.0.1", 1234, "127.0.0.1", 80);
  txn->ProcessUri("/attack", "POST", "1.1");
  txn->AddRequestHeader("Host", "localhost");
  txn->AddRequestHeader("Content-Type", "application/x-www-form-urlencoded");
  EXPECT_FALSE(txn->ProcessRequestHeaders().blocked());
  const std::string body = "user=1234+OR+1%3D1";
  EXPECT_FALSE(txn->AppendRequestBody(body.data(), body.size()).blocked());
  EXPECT_EQ(txn->ProcessRequestBody().status, 403);
}

TEST_F(EngineTest, GetWithoutBodyStillRunsPhase2) {
  auto txn = engine_->NewTransaction();
  txn->ProcessConnection("127.0.0.1", 1234, "127.0.0.1", 80);
  txn->ProcessUri("/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E", "GET", "1.1");
  txn->AddRequestHeader("Host", "localhost");
  EXPECT_FALSE(txn->ProcessRequestHeaders().blocked());
  EXPECT_EQ(txn->ProcessRequestBody().status, 403);
}

TEST_F(EngineTest, ResponseHeaders) {
  auto txn = engine_->NewTransaction();
  txn->ProcessConnection("127.0.0.1", 1234, "127.0.0.1", 80);
  txn->ProcessUri("/safe", "GET", "1.1");
  txn->AddRequestHeader("Host", "localhost");
  txn->ProcessRequestHeaders();
  txn->ProcessRequestBody();
  txn->AddResponseHeader("content-type", "text/plain");
  EXPECT_FALSE(txn->ProcessResponseHeaders(200, "HTTP/1.1").blocked());
  txn->ProcessLogging();
}

TEST_F(EngineTest, HostileInputDoesNotCrash) {
  Request r = Browser("", std::string(64 * 1024, '/'));
  r.headers.emplace_back(std::string("X-\0\xff", 4), std::string("\0\x01\x02\xfe", 4));
  r.headers.emplace_back("", "");
  r.headers.emplace_back("Content-Type", "application/json");
  r.body = std::string("{\"a\":[[[[[[[[[[[[[[[[\0\xff", 24);
  int got = Evaluate(*engine_, r);
  EXPECT_TRUE(got == 200 || got == 400 || got == 403 || got == 500) << got;
  Request deep = Browser("POST", "/json");
  deep.headers.emplace_back("Content-Type", "application/json");
  deep.body = std::string(5000, '[') + std::string(5000, ']');
  got = Evaluate(*engine_, deep);
  EXPECT_TRUE(got == 200 || got == 400 || got == 403) << got;
}

TEST(CApi, EndToEnd) {
  char err[256] = "";
  EXPECT_EQ(wafbench_msc_engine_new("/nonexistent.conf", err, sizeof(err)), nullptr);
  EXPECT_NE(std::string(err).find("/nonexistent.conf"), std::string::npos);
  wafbench_msc_engine* e = wafbench_msc_engine_new(kRules.c_str(), err, sizeof(err));
  ASSERT_NE(e, nullptr) << err;
  const std::string hdr = "Host: localhost\r\nUser-Agent: wafbench/1.0\nAccept: */*\n";
  EXPECT_EQ(wafbench_msc_engine_evaluate(e, "GET", 3, "/safe", 5, hdr.data(), hdr.size(), nullptr, 0), 200);
  const std::string blk = hdr + "X-WAF-Benchmark: phase1-block\n";
  EXPECT_EQ(wafbench_msc_engine_evaluate(e, "GET", 3, "/safe", 5, blk.data(), blk.size(), nullptr, 0), 403);
  const std::string form = hdr + "Content-Type: application/x-www-form-urlencoded\n";
  const std::string body = "user=1234+OR+1%3D1";
  EXPECT_EQ(
      wafbench_msc_engine_evaluate(e, "POST", 4, "/attack", 7, form.data(), form.size(), body.data(), body.size()),
      403);
  EXPECT_EQ(wafbench_msc_engine_evaluate(nullptr, "GET", 3, "/", 1, nullptr, 0, nullptr, 0), -1);
  EXPECT_EQ(wafbench_msc_engine_evaluate(e, "GET", 3, "/", 1, nullptr, 5, nullptr, 0), -1);
  wafbench_msc_engine_free(e);
  wafbench_msc_engine_free(nullptr);
}

// The transaction-level C API (engine_tx_c.h) drives the same steps.
TEST(TxCApi, Steps) {
  char err[256] = "";
  const std::string bad = "{\"rules_file\":\"/nonexistent.conf\"}";
  EXPECT_EQ(wafbench_msc_waf_new(bad.data(), bad.size(), err, sizeof(err)), nullptr);
  EXPECT_NE(std::string(err).find("cannot load rules"), std::string::npos) << err;
  const std::string unknown = "{\"rules_file\":\"" + kRules + "\",\"foo\":1}";
  EXPECT_EQ(wafbench_msc_waf_new(unknown.data(), unknown.size(), err, sizeof(err)), nullptr);
  EXPECT_NE(std::string(err).find("unknown key \"foo\""), std::string::npos) << err;

  const std::string cfg = "{\"rules_file\":\"" + kRules + "\",\"inspect_response\":true,\"max_body_bytes\":4096}";
  wafbench_msc_waf* waf = wafbench_msc_waf_new(cfg.data(), cfg.size(), err, sizeof(err));
  ASSERT_NE(waf, nullptr) << err;
  EXPECT_GE(wafbench_msc_waf_num_rules(waf), 6u);
  EXPECT_FALSE(std::string(wafbench_msc_waf_version(waf)).empty());
  EXPECT_EQ(wafbench_msc_waf_max_body_bytes(waf), 4096u);
  EXPECT_EQ(wafbench_msc_waf_inspect_response(waf), 1);

  auto start = [&](const std::string& uri, const std::string& method) {
    wafbench_msc_tx* tx = wafbench_msc_tx_new(waf);
    EXPECT_NE(tx, nullptr);
    EXPECT_EQ(wafbench_msc_tx_connection(tx, "127.0.0.1", 9, 40000, "127.0.0.1", 9, 10000), 0);
    EXPECT_EQ(wafbench_msc_tx_uri(tx, uri.data(), uri.size(), method.data(), method.size(), "1.1", 3), 0);
    wafbench_msc_tx_add_header(tx, "Host", 4, "localhost", 9);
    return tx;
  };
  // Phase 1.
  wafbench_msc_tx* tx = start("/safe", "GET");
  wafbench_msc_tx_add_header(tx, "X-WAF-Benchmark", 15, "phase1-block", 12);
  EXPECT_EQ(wafbench_msc_tx_process_headers(tx), 403);
  wafbench_msc_tx_logging(tx);
  EXPECT_EQ(wafbench_msc_tx_engine_error(tx), 0);
  wafbench_msc_tx_free(tx);
  // Phase 2 on a body.
  tx = start("/attack", "POST");
  wafbench_msc_tx_add_header(tx, "Content-Type", 12, "application/x-www-form-urlencoded", 33);
  EXPECT_EQ(wafbench_msc_tx_process_headers(tx), 0);
  const std::string body = "user=1234+OR+1%3D1";
  EXPECT_EQ(wafbench_msc_tx_append_body(tx, body.data(), body.size()), 0);
  EXPECT_EQ(wafbench_msc_tx_process_body(tx), 403);
  wafbench_msc_tx_free(tx);
  // A clean request through every phase.
  tx = start("/safe", "GET");
  EXPECT_EQ(wafbench_msc_tx_process_headers(tx), 0);
  EXPECT_EQ(wafbench_msc_tx_process_body(tx), 0);
  wafbench_msc_tx_add_response_header(tx, "content-type", 12, "text/plain", 10);
  EXPECT_EQ(wafbench_msc_tx_process_response_headers(tx, 200, "HTTP/1.1", 8), 0);
  EXPECT_EQ(wafbench_msc_tx_process_response_body(tx), 0);
  wafbench_msc_tx_logging(tx);
  EXPECT_EQ(wafbench_msc_tx_engine_error(tx), 0);
  wafbench_msc_tx_free(tx);
  // No transaction: every step fails closed.
  EXPECT_EQ(wafbench_msc_tx_process_headers(nullptr), 500);
  EXPECT_EQ(wafbench_msc_tx_engine_error(nullptr), 1);
  wafbench_msc_tx_free(nullptr);
  wafbench_msc_waf_free(waf);
  wafbench_msc_waf_free(nullptr);
}

// RulesDir is a fresh directory of rule files for one test.
class RulesDir {
 public:
  explicit RulesDir(const std::string& name) : dir_(::testing::TempDir() + "wafbench_rules_" + name) {
    std::string cmd = "rm -rf '" + dir_ + "' && mkdir -p '" + dir_ + "/conf.d'";
    EXPECT_EQ(std::system(cmd.c_str()), 0);
  }
  ~RulesDir() { std::system(("rm -rf '" + dir_ + "'").c_str()); }
  std::string Write(const std::string& rel, const std::string& text) const {
    std::string path = dir_ + "/" + rel;
    std::ofstream(path) << text;
    return path;
  }
  const std::string& path() const { return dir_; }

 private:
  std::string dir_;
};

TEST(CheckRules, Table) {
  const std::string base = "SecRuleEngine On\n";
  struct Case {
    std::string name;
    std::vector<std::pair<std::string, std::string>> files;  // main.conf first
    std::string want_err;                                    // "" = accepted
  };
  const Case cases[] = {
      {"plain",
       {{"main.conf", base + "SecRule ARGS \"@rx exec:\" \"id:1,phase:2,deny,msg:'no exec: here, really'\"\n"}},
       ""},
      {"comment", {{"main.conf", base + "# SecRuleScript /x.lua\n  # SecAction \"exec:/x.lua\"\n"}}, ""},
      {"rule_script", {{"main.conf", base + "SecRuleScript /srv/x.lua \"block\"\n"}}, "main.conf:2: SecRuleScript"},
      {"rule_script_case", {{"main.conf", base + "  secrulescript /srv/x.lua\n"}}, "main.conf:2: SecRuleScript"},
      {"exec_action",
       {{"main.conf", base + "SecAction \"id:2,phase:1,pass,exec:/srv/x.lua\"\n"}},
       "main.conf:2: action exec:"},
      {"exec_default", {{"main.conf", base + "SecDefaultAction \"phase:2,log,EXEC:/srv/x.lua\"\n"}}, "action exec:"},
      {"exec_update", {{"main.conf", base + "SecRuleUpdateActionById 1 \"exec:/srv/x.lua\"\n"}}, "action exec:"},
      {"exec_unquoted", {{"main.conf", base + "SecAction id:3,phase:1,pass,exec:/srv/x.lua\n"}}, "action exec:"},
      {"exec_after_blank", {{"main.conf", base + "SecAction \"id:3,pass\" \"exec:/x.lua\"\n"}}, "action exec:"},
      {"exec_continued",
       {{"main.conf", base + "SecRule ARGS \"@rx a\" \\\n  \"id:4,phase:2,\\\n  exec:/srv/x.lua\"\n"}},
       "main.conf:2: action exec:"},
      {"inspect_file",
       {{"main.conf", base + "SecRule FILES_TMPNAMES \"!@inspectFile /x.lua\" \"id:5,deny\"\n"}},
       "@inspectFile"},
      {"remote_rules", {{"main.conf", base + "SecRemoteRules key https://example.invalid/r.conf\n"}}, "SecRemoteRules"},
      {"include_relative",
       {{"main.conf", base + "Include conf.d/a.conf\n"}, {"conf.d/a.conf", "SecAction \"id:6,exec:/x.lua\"\n"}},
       "a.conf:1: action exec:"},
      {"include_glob_nested",
       {{"main.conf", base + "Include \"conf.d/*.conf\"\n"},
        {"conf.d/a.conf", "SecAction \"id:7,pass\"\nInclude ../b.rules\n"},
        {"b.rules", "\n\nSecRuleScript /x.lua\n"}},
       "b.rules:3: SecRuleScript"},
      {"include_cycle",
       {{"main.conf", base + "Include conf.d/a.conf\n"}, {"conf.d/a.conf", "Include ../main.conf\n"}},
       ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    RulesDir dir(c.name);
    std::string main;
    for (const auto& f : c.files) {
      std::string p = dir.Write(f.first, f.second);
      if (main.empty()) main = p;
    }
    std::string err;
    bool ok = CheckRules(main, &err);
    if (c.want_err.empty()) {
      EXPECT_TRUE(ok) << err;
    } else {
      EXPECT_FALSE(ok);
      EXPECT_NE(err.find(c.want_err), std::string::npos) << err;
    }
  }
}

// Engine::Create refuses Lua before libmodsecurity parses (and would compile
// the script), and names the file.
TEST(Engine, RefusesLua) {
  RulesDir dir("engine_lua");
  dir.Write("x.lua", "function main() return nil end\n");
  std::string main = dir.Write("main.conf", "SecRuleEngine On\nSecRuleScript " + dir.path() + "/x.lua \"block\"\n");
  std::string err;
  EXPECT_EQ(Engine::Create(main, &err), nullptr);
  EXPECT_NE(err.find("SecRuleScript (Lua) is not allowed"), std::string::npos) << err;
}

TEST(Engine, Version) {
  std::string err;
  auto e = Engine::Create(kRules, &err);
  ASSERT_NE(e, nullptr) << err;
  // "3.0.9": digits and exactly two dots, neither first nor last.
  const std::string& v = e->Version();
  EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
  EXPECT_EQ(v.find_first_not_of("0123456789."), std::string::npos) << v;
  EXPECT_TRUE(!v.empty() && v.front() != '.' && v.back() != '.' && v.find("..") == std::string::npos) << v;
}

Request Attack() {
  Request r;
  r.method = "POST";
  r.uri = "/attack";
  r.headers = {{"Host", "localhost"},
               {"User-Agent", "wafbench/1.0"},
               {"Accept", "*/*"},
               {"Content-Type", "application/x-www-form-urlencoded"}};
  r.body = "user=1234+OR+1%3D1";
  return r;
}

Request LogMarker() {
  Request r;
  r.uri = "/safe?x=log-marker";
  r.headers = {{"Host", "localhost"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}};
  return r;
}

// Rule 300 (pass, log) reaches the server-log callback; the text is built
// only when the logger is enabled.
TEST(Engine, LoggerFormatsOnlyWhenEnabled) {
  int asked = 0;
  std::vector<std::string> lines;
  bool enabled = false;
  Logger log;
  log.enabled = [&] {
    ++asked;
    return enabled;
  };
  log.write = [&](std::string_view line) { lines.emplace_back(line); };
  std::string err;
  auto e = Engine::Create(kRules, &err, log);
  ASSERT_NE(e, nullptr) << err;
  EXPECT_EQ(Evaluate(*e, LogMarker()), 200);
  EXPECT_EQ(asked, 1);
  EXPECT_TRUE(lines.empty());
  enabled = true;
  EXPECT_EQ(Evaluate(*e, LogMarker()), 200);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("id \"300\""), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("log marker seen"), std::string::npos) << lines[0];
}

const std::string kMatchLogRules = std::string(WAFBENCH_TESTDATA) + "/match_log.conf";

TEST(MatchLine, Format) {
  EXPECT_EQ(MatchLine(942100, "SQL Injection", "Matched Data: 1 OR 1=1", "1-7"),
            R"(wafbench-match [id "942100"] [msg "SQL Injection"] [data "Matched Data: 1 OR 1=1"] [tx "1-7"])");
  EXPECT_EQ(MatchLine(1, "say \"hi\"\\now\nnext", "", ""),
            R"(wafbench-match [id "1"] [msg "say \"hi\"\\now\nnext"] [data ""] [tx ""])");
}

TEST(ParseConfig, MatchLog) {
  Config c;
  std::string err;
  ASSERT_TRUE(ParseConfig(R"({"rules_file":"/r","match_log":true})", &c, &err)) << err;
  EXPECT_TRUE(c.match_log);
  ASSERT_TRUE(ParseConfig(R"({"rules_file":"/r"})", &c, &err)) << err;
  EXPECT_FALSE(c.match_log);
  EXPECT_FALSE(ParseConfig(R"({"rules_file":"/r","match_log":1})", &c, &err));
  EXPECT_NE(err.find("match_log: want true or false"), std::string::npos) << err;
}

// matchEngine loads match_log.conf with a match-line logger into *lines.
std::unique_ptr<Engine> MatchEngine(std::vector<std::string>* lines) {
  Logger log;
  log.match_lines = true;
  log.enabled = [] { return false; };  // not asked with match_lines
  log.write = [lines](std::string_view line) { lines->emplace_back(line); };
  std::string err;
  auto e = Engine::Create(kMatchLogRules, &err, log);
  EXPECT_NE(e, nullptr) << err;
  return e;
}

bool HasLine(const std::vector<std::string>& lines, std::string_view want) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(want) != l.npos; });
}

// In DetectionOnly every logged match, the disruptive ones included, reaches
// the callback as a MatchLine, and nothing is blocked.
TEST(MatchLog, DetectionOnlyRequest) {
  std::vector<std::string> lines;
  auto e = MatchEngine(&lines);
  ASSERT_NE(e, nullptr);
  Request marker = LogMarker();
  marker.headers.emplace_back("X-CRS-Test", "marker \"a\" 1");
  EXPECT_EQ(Evaluate(*e, marker), 200);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind(R"(wafbench-match [id "999999"] [msg "marker \"a\" 1"] [data ""] [tx ")", 0), 0u)
      << lines[0];
  lines.clear();
  EXPECT_EQ(Evaluate(*e, Attack()), 200);
  EXPECT_TRUE(HasLine(lines, R"([id "200"] [msg "sqli"] [data "1234 OR 1=1"])")) << ::testing::PrintToString(lines);
}

// In blocking mode a denied request's matches reach match_log too — the
// detection rule's `block` and the rule that denies on the score — each
// once, although libmodsecurity keeps disruptive matches from the callback.
TEST(MatchLog, BlockingRequest) {
  std::vector<std::string> lines;
  Logger log;
  log.match_lines = true;
  log.write = [&lines](std::string_view line) { lines.emplace_back(line); };
  std::string err;
  auto e = Engine::Create(std::string(WAFBENCH_TESTDATA) + "/match_log_blocking.conf", &err, log);
  ASSERT_NE(e, nullptr) << err;
  EXPECT_EQ(Evaluate(*e, Attack()), 403);
  EXPECT_TRUE(HasLine(lines, R"([id "210"] [msg "sqli"])")) << ::testing::PrintToString(lines);
  EXPECT_TRUE(HasLine(lines, R"([id "290"] [msg "score 5"])")) << ::testing::PrintToString(lines);
  EXPECT_EQ(lines.size(), 2u) << ::testing::PrintToString(lines);
  lines.clear();
  EXPECT_EQ(Evaluate(*e, LogMarker()), 200);
  EXPECT_TRUE(lines.empty()) << ::testing::PrintToString(lines);
}

// Phases 4 and 5: a response body the rules match and a phase-5 rule log.
TEST(MatchLog, ResponseBodyAndLogging) {
  std::vector<std::string> lines;
  auto e = MatchEngine(&lines);
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->ResponseBodyAccess());
  EXPECT_EQ(e->ResponseBodyLimit(), 4096u);
  auto txn = e->NewTransaction();
  EXPECT_FALSE(txn->ProcessConnection("127.0.0.1", 1, "127.0.0.1", 2).blocked());
  EXPECT_FALSE(txn->ProcessUri("/phase5", "GET", "1.1").blocked());
  txn->AddRequestHeader("Host", "localhost");
  EXPECT_FALSE(txn->ProcessRequestHeaders().blocked());
  EXPECT_FALSE(txn->ProcessRequestBody().blocked());
  txn->AddResponseHeader("Content-Type", "text/plain");
  EXPECT_FALSE(txn->ProcessResponseHeaders(200, "HTTP/1.1").blocked());
  const std::string body = "You have an error in your SQL syntax near 'x'";
  EXPECT_FALSE(txn->AppendResponseBody(body.data(), body.size()).blocked());
  EXPECT_FALSE(txn->ProcessResponseBody().blocked());
  EXPECT_TRUE(HasLine(lines, R"([id "400"] [msg "sql error in response"])")) << ::testing::PrintToString(lines);
  EXPECT_FALSE(HasLine(lines, R"([id "500"])"));
  txn->ProcessLogging();
  EXPECT_TRUE(HasLine(lines, R"([id "500"] [msg "logging phase"])")) << ::testing::PrintToString(lines);
  EXPECT_FALSE(txn->engine_error());
}

// Without match_lines the rule set's response settings are still read, and
// a rule set without SecResponseBodyAccess asks for no response body.
TEST(MatchLog, ResponseBodyAccessOff) {
  std::string err;
  auto e = Engine::Create(kRules, &err);
  ASSERT_NE(e, nullptr) << err;
  EXPECT_FALSE(e->ResponseBodyAccess());
  EXPECT_EQ(e->ResponseBodyLimit(), 0u);
}

// A glue exception inside a step (here std::bad_alloc from the log
// callback, which libmodsecurity calls on rule 300's match) fails the
// request closed, and every later step answers 500 without running.
TEST(Engine, GlueExceptionFailsClosed) {
  Logger log;
  log.write = [](std::string_view) { throw std::bad_alloc(); };
  std::string err;
  auto e = Engine::Create(kRules, &err, log);
  ASSERT_NE(e, nullptr) << err;
  EXPECT_EQ(Evaluate(*e, Attack()), 403);  // disruptive: no log call
  EXPECT_EQ(Evaluate(*e, LogMarker()), 500);

  auto txn = e->NewTransaction();
  EXPECT_FALSE(txn->ProcessConnection("127.0.0.1", 1, "127.0.0.1", 2).blocked());
  EXPECT_FALSE(txn->ProcessUri("/safe?x=log-marker", "GET", "1.1").blocked());
  txn->AddRequestHeader("Host", "localhost");
  EXPECT_FALSE(txn->ProcessRequestHeaders().blocked());
  EXPECT_FALSE(txn->engine_error());
  EXPECT_EQ(txn->ProcessRequestBody().status, 500);
  EXPECT_TRUE(txn->engine_error());
  EXPECT_EQ(txn->AppendRequestBody("", 0).status, 500);
  EXPECT_EQ(txn->ProcessResponseHeaders(200, "HTTP/1.1").status, 500);
  txn->ProcessLogging();
}

// Several threads run transactions on ONE shared rule set, as Envoy's
// workers do. Rules: $WAFBENCH_CONCURRENCY_RULES (make tsan sets the real
// CRS, build/crs/main.conf), else testdata/rules.conf. Every verdict must be
// right; under ThreadSanitizer (make tsan) any race it sees fails the run.
TEST(Concurrency, SharedRuleSet) {
  const char* env = std::getenv("WAFBENCH_CONCURRENCY_RULES");
  const std::string rules = env != nullptr && *env != '\0' ? env : kRules;
  struct stat st;
  ASSERT_EQ(stat(rules.c_str(), &st), 0) << rules << ": missing (make crs builds build/crs/main.conf)";
  std::string err;
  auto engine = Engine::Create(rules, &err);
  ASSERT_NE(engine, nullptr) << err;
  Request benign;
  benign.uri = "/search?q=normal-value";
  benign.headers = {{"Host", "localhost"}, {"User-Agent", "wafbench/1.0"}, {"Accept", "*/*"}};
  Request xss = benign;
  xss.uri = "/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E";
  Request phase1 = benign;
  phase1.headers.emplace_back("X-WAF-Benchmark", "phase1-block");
  const std::vector<std::pair<Request, int>> mix = {{benign, 200}, {Attack(), 403}, {xss, 403}, {phase1, 403}};

  const int threads = 4;
  const char* n_env = std::getenv("WAFBENCH_CONCURRENCY_ROUNDS");
  const int rounds = n_env != nullptr ? std::atoi(n_env) : 10;
  std::atomic<int> wrong{0}, done{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();  // start together
      for (int i = 0; i < rounds; ++i) {
        for (size_t k = 0; k < mix.size(); ++k) {
          const auto& [req, want] = mix[(k + t) % mix.size()];
          if (Evaluate(*engine, req) != want) wrong.fetch_add(1);
          done.fetch_add(1);
        }
      }
    });
  }
  go.store(true);
  for (auto& th : pool) th.join();
  EXPECT_EQ(done.load(), threads * rounds * static_cast<int>(mix.size()));
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace modsec
}  // namespace wafbench
