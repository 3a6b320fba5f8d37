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
  auto number = [&](int index) {
    return size_t(index) < dump_numbers.size() ? std::to_string(dump_numbers[size_t(index)]) : "";
  };
  if (dump >= 0) Append(&out, "dump", number(dump));
  if (dump < 0 && dump_numbers.size() > 1) Append(&out, "dump", "all");
  if (base >= 0) Append(&out, "base", number(base));
  return out;
}

bool ParseViewQuery(const std::multimap<std::string, std::string>& params, ViewQuery* q,
                    std::string* error) {
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
    if (name == "dump" || name == "base") {
      int* index = name == "dump" ? &q->dump : &q->base;
      if (name == "base" && value.empty()) {
        *index = -1;
        continue;
      }
      if (name == "dump" && value == "all") {
        *index = -1;
        continue;
      }
      char* end = nullptr;
      long n = value.empty() ? -1 : strtol(value.c_str(), &end, 10);
      int found = -1;
      for (size_t i = 0; !value.empty() && *end == '\0' && i < q->dump_numbers.size(); ++i) {
        if (q->dump_numbers[i] == n) found = int(i);
      }
      if (found < 0) {
        std::string numbers;
        for (int d : q->dump_numbers) numbers += (numbers.empty() ? "" : ", ") + std::to_string(d);
        if (numbers.size() > 60) {
          numbers = std::to_string(q->dump_numbers.front()) + " to " + std::to_string(q->dump_numbers.back());
        }
        *error = name + "=" + value + ": no such dump (the dumps are " + numbers +
                 (name == "dump" ? "; all: their sum)" : ")");
        return false;
      }
      *index = found;
      continue;
    }
    for (const auto& [regex_name, field] : regexes) {
      if (name == regex_name) *field = value;
    }
  }
  return true;
}

}  // namespace heapkit::pprof
