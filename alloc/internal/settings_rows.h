// A settings table as text: the README's table rows, which settings_test compares with the
// READMEs and `pprof-tool --settings` prints. For tools and tests (std::string), not the runtime.
#pragma once

#include <span>
#include <string>

#include "alloc/internal/settings.h"

namespace heapkit::internal {

inline const char* SettingTypeName(SettingType type) {
  switch (type) {
    case SettingType::kInteger: return "integer";
    case SettingType::kSize: return "size";
    case SettingType::kNumber: return "number";
    case SettingType::kBool: return "bool";
    case SettingType::kText: return "text";
  }
  return "?";
}

inline constexpr const char* kSettingsTableHeader =
    "| Variable | Type | Default | Accepted | Meaning |";

// "| `NAME` | type | default | accepted | meaning |"
inline std::string SettingRow(const Setting& s) {
  return std::string("| `") + s.name + "` | " + SettingTypeName(s.type) + " | " + s.default_text +
         " | " + s.allowed + " | " + s.meaning + " |";
}

// The header, its rule and a row per entry, each line ending in '\n'.
inline std::string SettingsTable(std::span<const Setting> table) {
  std::string text = std::string(kSettingsTableHeader) + "\n|---|---|---|---|---|\n";
  for (const Setting& s : table) text += SettingRow(s) + "\n";
  return text;
}

}  // namespace heapkit::internal
