#include "engine.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "engine_c.h"

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
      {"not_object", R"(["rules_file"])", false, "", false, 0, "JSON object"},
      {"trailing", R"({"rules_file":"/r"} x)", false, "", false, 0, "trailing"},
      {"unterminated", R"({"rules_file":"/r)", false, "", false, 0, "rules_file"},
      {"empty", "", false, "", false, 0, "JSON object"},
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

}  // namespace
}  // namespace modsec
}  // namespace wafbench
