// Tests of the exported hooks (module.cc) without Envoy: this file includes
// module.cc and defines the Envoy callbacks the module imports, recording
// what the module asks for (local replies, counters, log lines). It checks
// what an Envoy test cannot provoke: a glue exception (std::bad_alloc thrown
// by a callback) in each hook fails the request closed — a 500 local reply
// when one can still be sent, counted as an engine error — and never crosses
// the C ABI. The real module inside the real Envoy is tested in tests/e2e.
#include "module.cc"  // NOLINT(build/include): the unit under test

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <new>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#ifndef WAFBENCH_TESTDATA
#error "WAFBENCH_TESTDATA must name the testdata directory"
#endif

namespace {

// Stream is what the stand-in callbacks serve for one request and what
// they record.
struct Stream {
  std::vector<std::pair<std::string, std::string>> request_headers;
  std::string body;                // served as the received chunk
  const char* throw_in = nullptr;  // callback name that throws std::bad_alloc once
  int replies = 0;
  uint32_t status = 0;
  std::string details;
  std::map<std::string, uint64_t> counters;
};

Stream* current = nullptr;
std::vector<std::string> counter_names;  // index = counter id
std::vector<std::string> info_lines;

void MaybeThrow(const char* callback) {
  if (current != nullptr && current->throw_in != nullptr && std::string(current->throw_in) == callback) {
    current->throw_in = nullptr;
    throw std::bad_alloc();
  }
}

}  // namespace

extern "C" {

void envoy_dynamic_module_callback_log(envoy_dynamic_module_type_log_level level,
                                       envoy_dynamic_module_type_module_buffer message) {
  if (level == envoy_dynamic_module_type_log_level_Info) info_lines.emplace_back(message.ptr, message.length);
}

bool envoy_dynamic_module_callback_log_enabled(envoy_dynamic_module_type_log_level level) {
  return level >= envoy_dynamic_module_type_log_level_Info;
}

envoy_dynamic_module_type_metrics_result envoy_dynamic_module_callback_http_filter_config_define_counter(
    envoy_dynamic_module_type_http_filter_config_envoy_ptr, envoy_dynamic_module_type_module_buffer name,
    envoy_dynamic_module_type_module_buffer*, size_t, size_t* counter_id_ptr) {
  *counter_id_ptr = counter_names.size();
  counter_names.emplace_back(name.ptr, name.length);
  return envoy_dynamic_module_type_metrics_result_Success;
}

envoy_dynamic_module_type_metrics_result envoy_dynamic_module_callback_http_filter_increment_counter(
    envoy_dynamic_module_type_http_filter_envoy_ptr envoy, size_t id, envoy_dynamic_module_type_module_buffer*, size_t,
    uint64_t value) {
  MaybeThrow("increment_counter");
  static_cast<Stream*>(envoy)->counters[counter_names.at(id)] += value;
  return envoy_dynamic_module_type_metrics_result_Success;
}

size_t envoy_dynamic_module_callback_http_get_headers_size(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                           envoy_dynamic_module_type_http_header_type type) {
  MaybeThrow("get_headers_size");
  auto* s = static_cast<Stream*>(envoy);
  return type == envoy_dynamic_module_type_http_header_type_RequestHeader ? s->request_headers.size() : 0;
}

bool envoy_dynamic_module_callback_http_get_headers(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                    envoy_dynamic_module_type_http_header_type,
                                                    envoy_dynamic_module_type_envoy_http_header* out) {
  auto* s = static_cast<Stream*>(envoy);
  for (size_t i = 0; i < s->request_headers.size(); ++i) {
    const auto& [k, v] = s->request_headers[i];
    out[i] = {k.data(), k.size(), v.data(), v.size()};
  }
  return true;
}

bool envoy_dynamic_module_callback_http_filter_get_attribute_string(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                                    envoy_dynamic_module_type_attribute_id,
                                                                    envoy_dynamic_module_type_envoy_buffer*) {
  return false;
}

bool envoy_dynamic_module_callback_http_filter_get_attribute_int(envoy_dynamic_module_type_http_filter_envoy_ptr,
                                                                 envoy_dynamic_module_type_attribute_id, uint64_t*) {
  return false;
}

size_t envoy_dynamic_module_callback_http_get_body_size(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                        envoy_dynamic_module_type_http_body_type type) {
  MaybeThrow("get_body_size");
  auto* s = static_cast<Stream*>(envoy);
  return type == envoy_dynamic_module_type_http_body_type_ReceivedRequestBody ? s->body.size() : 0;
}

size_t envoy_dynamic_module_callback_http_get_body_chunks_size(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                               envoy_dynamic_module_type_http_body_type type) {
  auto* s = static_cast<Stream*>(envoy);
  return type == envoy_dynamic_module_type_http_body_type_ReceivedRequestBody && !s->body.empty() ? 1 : 0;
}

bool envoy_dynamic_module_callback_http_get_body_chunks(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                        envoy_dynamic_module_type_http_body_type,
                                                        envoy_dynamic_module_type_envoy_buffer* out) {
  auto* s = static_cast<Stream*>(envoy);
  out[0] = {s->body.data(), s->body.size()};
  return true;
}

bool envoy_dynamic_module_callback_http_received_buffered_request_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr) {
  return false;
}

bool envoy_dynamic_module_callback_http_received_buffered_response_body(
    envoy_dynamic_module_type_http_filter_envoy_ptr) {
  return false;
}

uint64_t envoy_dynamic_module_callback_http_get_buffer_limit(envoy_dynamic_module_type_http_filter_envoy_ptr) {
  return 0;
}

void envoy_dynamic_module_callback_http_set_buffer_limit(envoy_dynamic_module_type_http_filter_envoy_ptr, uint64_t) {}

void envoy_dynamic_module_callback_http_send_response(envoy_dynamic_module_type_http_filter_envoy_ptr envoy,
                                                      uint32_t status, envoy_dynamic_module_type_module_http_header*,
                                                      size_t, envoy_dynamic_module_type_module_buffer,
                                                      envoy_dynamic_module_type_module_buffer details) {
  auto* s = static_cast<Stream*>(envoy);
  ++s->replies;
  s->status = status;
  s->details.assign(details.ptr, details.length);
}

}  // extern "C"

namespace {

envoy_dynamic_module_type_envoy_buffer Buffer(const std::string& s) { return {s.data(), s.size()}; }

class ModuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("WAFBENCH_STAGE_TIMERS", "1", 1);
    counter_names.clear();
    info_lines.clear();
    const std::string json = std::string(R"({"rules_file":")") + WAFBENCH_TESTDATA + R"(/rules.conf"})";
    config_ = envoy_dynamic_module_on_http_filter_config_new(nullptr, Buffer("waf"), Buffer(json));
    ASSERT_NE(config_, nullptr);
  }
  void TearDown() override {
    envoy_dynamic_module_on_http_filter_config_destroy(config_);
    unsetenv("WAFBENCH_STAGE_TIMERS");
  }
  static Stream Get(const std::string& path) {
    Stream s;
    s.request_headers = {
        {":method", "GET"}, {":path", path}, {":authority", "localhost"}, {"accept", "*/*"}, {"user-agent", "test/1"}};
    return s;
  }
  static Stream Post(const std::string& body) {
    Stream s = Get("/attack");
    s.request_headers[0].second = "POST";
    s.request_headers.emplace_back("content-type", "application/x-www-form-urlencoded");
    s.body = body;
    return s;
  }
  // Run drives one stream through the hooks as Envoy does; it returns the
  // request-headers status and, for a body, the request-body status.
  std::pair<int, int> Run(Stream* s) {
    current = s;
    auto* f = envoy_dynamic_module_on_http_filter_new(config_, s);
    int hs = envoy_dynamic_module_on_http_filter_request_headers(s, f, s->body.empty());
    int bs = -1;
    if (!s->body.empty() && s->replies == 0) bs = envoy_dynamic_module_on_http_filter_request_body(s, f, true);
    envoy_dynamic_module_on_http_filter_stream_complete(s, f);
    envoy_dynamic_module_on_http_filter_destroy(f);
    current = nullptr;
    return {hs, bs};
  }
  std::string Counter(const Stream& s, const std::string& name) {
    auto it = s.counters.find("wafbench_modsecurity_" + name);
    return it == s.counters.end() ? "0" : std::to_string(it->second);
  }

  envoy_dynamic_module_type_http_filter_config_module_ptr config_ = nullptr;
};

constexpr int kHeadersContinue = envoy_dynamic_module_type_on_http_filter_request_headers_status_Continue;
constexpr int kHeadersStop = envoy_dynamic_module_type_on_http_filter_request_headers_status_StopIteration;
constexpr int kBodyContinue = envoy_dynamic_module_type_on_http_filter_request_body_status_Continue;
constexpr int kBodyStop = envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationNoBuffer;

TEST_F(ModuleTest, ModuleInfoLine) {
  int n = 0;
  for (const auto& l : info_lines) {
    if (l.rfind("wafbench-module ", 0) != 0) continue;
    ++n;
    EXPECT_TRUE(std::regex_match(l, std::regex(R"(wafbench-module \{"module":"wafbench_modsecurity","engine":)"
                                               R"("modsecurity","engine_version":"\d+\.\d+\.\d+",)"
                                               R"("build":"modsecurity","rules":\d+\})")))
        << l;
  }
  EXPECT_EQ(n, 1);
  EXPECT_EQ(counter_names.size(), static_cast<size_t>(wafbench::modsec::kNumCounters));
}

TEST_F(ModuleTest, Table) {
  struct Case {
    std::string name;
    Stream stream;
    const char* throw_in;
    std::pair<int, int> want_status;
    int want_reply;  // 0 = none
    std::map<std::string, std::string> want_counters;
  };
  const std::map<std::string, std::string> none = {
      {"blocked_phase1", "0"}, {"blocked_phase2", "0"}, {"engine_errors", "0"}, {"body_too_large", "0"}};
  auto with = [&](std::map<std::string, std::string> m) {
    auto out = none;
    for (auto& [k, v] : m) out[k] = v;
    out["requests"] = "1";
    return out;
  };
  Stream phase1 = Get("/safe");
  phase1.request_headers.emplace_back("x-waf-benchmark", "phase1-block");
  Stream big = Post(std::string(1048577, 'a'));
  const Case cases[] = {
      {"benign_get", Get("/safe"), nullptr, {kHeadersContinue, -1}, 0, with({})},
      {"phase1_block", phase1, nullptr, {kHeadersStop, -1}, 403, with({{"blocked_phase1", "1"}})},
      {"sqli_body",
       Post("user=1234+OR+1%3D1"),
       nullptr,
       {kHeadersStop, kBodyStop},
       403,
       with({{"blocked_phase2", "1"}})},
      {"benign_body", Post("user=alice"), nullptr, {kHeadersStop, kBodyContinue}, 0, with({})},
      {"body_too_large", big, nullptr, {kHeadersStop, kBodyStop}, 413, with({{"body_too_large", "1"}})},
      // Glue exceptions: std::bad_alloc from an Envoy callback inside a hook.
      {"throw_in_request_headers",
       Get("/safe"),
       "get_headers_size",
       {kHeadersStop, -1},
       500,
       with({{"engine_errors", "1"}})},
      {"throw_in_request_body",
       Post("user=alice"),
       "get_body_size",
       {kHeadersStop, kBodyStop},
       500,
       with({{"engine_errors", "1"}})},
      // The first counter call is "requests"; it throws before anything ran.
      {"throw_in_first_count",
       Get("/safe"),
       "increment_counter",
       {kHeadersStop, -1},
       500,
       {{"requests", "0"}, {"engine_errors", "1"}}},
  };
  for (auto c : cases) {
    SCOPED_TRACE(c.name);
    c.stream.throw_in = c.throw_in;
    auto got = Run(&c.stream);
    EXPECT_EQ(got, c.want_status);
    EXPECT_EQ(c.stream.replies, c.want_reply == 0 ? 0 : 1);
    if (c.want_reply != 0) {
      EXPECT_EQ(c.stream.status, static_cast<uint32_t>(c.want_reply));
    }
    if (c.want_reply == 500) {
      EXPECT_EQ(c.stream.details, "wafbench_modsecurity_engine_error");
    }
    for (const auto& [name, want] : c.want_counters) EXPECT_EQ(Counter(c.stream, name), want) << name;
  }
}

// A body followed by trailers never sees end_of_stream in the body hook:
// phase 2 must run in the trailers hook, or the body goes uninspected.
TEST_F(ModuleTest, BodyWithTrailersIsInspected) {
  for (const auto& [body, want_reply] :
       std::vector<std::pair<std::string, uint32_t>>{{"user=1234+OR+1%3D1", 403}, {"user=alice", 0}}) {
    SCOPED_TRACE(body);
    Stream s = Post(body);
    current = &s;
    auto* f = envoy_dynamic_module_on_http_filter_new(config_, &s);
    EXPECT_EQ(envoy_dynamic_module_on_http_filter_request_headers(&s, f, false), kHeadersStop);
    EXPECT_EQ(envoy_dynamic_module_on_http_filter_request_body(&s, f, false),
              envoy_dynamic_module_type_on_http_filter_request_body_status_StopIterationAndBuffer);
    int got = envoy_dynamic_module_on_http_filter_request_trailers(&s, f);
    envoy_dynamic_module_on_http_filter_stream_complete(&s, f);
    envoy_dynamic_module_on_http_filter_destroy(f);
    current = nullptr;
    if (want_reply == 0) {
      EXPECT_EQ(got, envoy_dynamic_module_type_on_http_filter_request_trailers_status_Continue);
      EXPECT_EQ(s.replies, 0);
    } else {
      EXPECT_EQ(got, envoy_dynamic_module_type_on_http_filter_request_trailers_status_StopIteration);
      EXPECT_EQ(s.replies, 1);
      EXPECT_EQ(s.status, want_reply);
      EXPECT_EQ(Counter(s, "blocked_phase2"), "1");
    }
  }
}

// After the response: an exception in stream_complete (here from the
// logging timer's counter call) is counted, and no reply is attempted.
TEST_F(ModuleTest, ThrowInStreamComplete) {
  Stream s = Get("/safe");
  current = &s;
  auto* f = envoy_dynamic_module_on_http_filter_new(config_, &s);
  EXPECT_EQ(envoy_dynamic_module_on_http_filter_request_headers(&s, f, true), kHeadersContinue);
  s.throw_in = "increment_counter";
  envoy_dynamic_module_on_http_filter_stream_complete(&s, f);
  envoy_dynamic_module_on_http_filter_destroy(f);
  current = nullptr;
  EXPECT_EQ(s.replies, 0);
  EXPECT_EQ(Counter(s, "engine_errors"), "1");
}

TEST(ModuleConfig, RefusesLua) {
  info_lines.clear();
  const std::string path = ::testing::TempDir() + "wafbench_module_lua.conf";
  std::ofstream(path) << "SecRuleEngine On\nSecAction \"id:1,phase:1,pass,exec:/tmp/x.lua\"\n";
  const std::string json = R"({"rules_file":")" + path + R"("})";
  EXPECT_EQ(envoy_dynamic_module_on_http_filter_config_new(nullptr, Buffer("waf"), Buffer(json)), nullptr);
  std::remove(path.c_str());
}

// filter_new returns null only when allocation failed; the request is then
// answered 500 all the same.
TEST(ModuleConfig, NullFilterAnswers500) {
  Stream s;
  EXPECT_EQ(envoy_dynamic_module_on_http_filter_request_headers(&s, nullptr, true), kHeadersStop);
  EXPECT_EQ(s.replies, 1);
  EXPECT_EQ(s.status, 500u);
  EXPECT_EQ(envoy_dynamic_module_on_http_filter_request_body(&s, nullptr, true), kBodyStop);
  envoy_dynamic_module_on_http_filter_stream_complete(&s, nullptr);
  envoy_dynamic_module_on_http_filter_destroy(nullptr);
}

}  // namespace
