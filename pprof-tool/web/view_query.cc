#include "pprof-tool/web/view_query.h"

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace heapkit::pprof {
namespace {

constexpr std::pair<const char*, SampleType> kSampleTypes[] = {
    {"inuse_space", SampleType::kInuseSpace},
    {"inuse_objects", SampleType::kInuseObjects},
    {"alloc_space", SampleType::kAllocSpace},
    {"alloc_objects", SampleType::kAllocObjects}};

void Append(std::string* out, const char* name, const std::string& value) {
  if (value.empty()) return;
  if (!out->empty()) *out += '&';
  *out += name;
  *out += '=';
  *out += UrlEncode(value);
}

}  // namespace

std::string UrlEncode(const std::string& value) {
  std::string out;
  for (unsigned char c : value) {
    if (isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += char(c);
    } else {
      char buf[4];
      snprintf(buf, sizeof buf, "%%%02X", c);
      out += buf;
    }
  }
  return out;
}

std::string ViewQuery::Encode() const {
  std::string out;
  if (has_sample_type) Append(&out, "si", SampleTypeName(sample_type));
  Append(&out, "f", focus);
  Append(&out, "i", ignore);
  Append(&out, "h", hide);
  Append(&out, "s", show);
  Append(&out, "sf", show_from);
  if (dump >= 0) Append(&out, "dump", std::to_string(dump));
  return out;
}

bool ParseViewQuery(const std::multimap<std::string, std::string>& params, size_t dumps,
                    ViewQuery* q, std::string* error) {
  const std::pair<const char*, std::string*> regexes[] = {
      {"f", &q->focus}, {"i", &q->ignore}, {"h", &q->hide}, {"s", &q->show},
      {"sf", &q->show_from}};
  for (const auto& [name, value] : params) {
    if (value.size() > kMaxQueryValue) {
      *error = "query parameter " + name.substr(0, 16) + " is longer than " +
               std::to_string(kMaxQueryValue) + " bytes";
      return false;
    }
    if (name == "si") {
      if (value.empty()) continue;
      bool known = false;
      for (const auto& [type_name, type] : kSampleTypes) {
        if (value == type_name) {
          q->has_sample_type = known = true;
          q->sample_type = type;
        }
      }
      if (!known) {
        *error = "unknown sample type si=" + value +
                 " (inuse_space, inuse_objects, alloc_space, alloc_objects)";
        return false;
      }
      continue;
    }
    if (name == "dump") {
      char* end = nullptr;
      long n = value.empty() ? -1 : strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || n < 0 || size_t(n) >= dumps) {
        *error = "dump=" + value + ": expected a profile number from 0 to " +
                 std::to_string(dumps == 0 ? 0 : dumps - 1);
        return false;
      }
      q->dump = int(n);
      continue;
    }
    for (const auto& [regex_name, field] : regexes) {
      if (name == regex_name) *field = value;
    }
  }
  return true;
}

}  // namespace heapkit::pprof
