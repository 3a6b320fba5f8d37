// The readers of settings.h: each takes its bounds and default from the table entry and leaves
// the parsing, the one-line refusals and the AT_SECURE rule to env.h.
#include "alloc/internal/settings.h"

#include "alloc/internal/env.h"
#include "alloc/internal/sections.h"

namespace heapkit::internal {

int64_t SettingInt64(const Setting& s) {
  int64_t value;
  SettingInt64Given(s, &value);
  return value;
}

bool SettingInt64Given(const Setting& s, int64_t* value) {
  return EnvInt64Given(s.name, s.default_value, s.min, s.max, s.type == SettingType::kSize, value);
}

int64_t SettingInt64Within(const Setting& s, int64_t default_value, int64_t min, int64_t max) {
  return EnvInt64(s.name, default_value, min, max, s.type == SettingType::kSize);
}

double SettingDouble(const Setting& s) {
  return EnvDouble(s.name, s.number_default, s.number_min, s.number_max);
}

bool SettingBool(const Setting& s) { return EnvBool(s.name, s.default_value != 0); }

HEAPKIT_ALWAYS_RUN_CODE const char* SettingText(const Setting& s) { return EnvRaw(s.name); }

}  // namespace heapkit::internal
