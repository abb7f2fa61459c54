// libFuzzer target for the filter_config reader (make fuzz): ParseConfig
// must return true or false with a message for any input, never crash,
// throw or read out of bounds, and a config it accepts must name a rules
// file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "engine.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  wafbench::modsec::Config config;
  std::string error;
  bool ok = wafbench::modsec::ParseConfig(std::string_view(reinterpret_cast<const char*>(data), size), &config, &error);
  if (ok && config.rules_file.empty()) std::abort();
  if (!ok && error.empty()) std::abort();
  return 0;
}
