#include "pprof-tool/web/view_query.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <type_traits>

namespace heapkit::pprof {
namespace {

void Append(std::string* out, const char* name, const std::string& value) {
  if (value.empty()) return;
  if (!out->empty()) *out += '&';
  *out += name;
  *out += '=';
  *out += UrlEncode(value);
}

// A member's value as its parameter writes it ("": not written).
template <typename T>
std::string ParameterValue(const ViewField& field, const T& value) {
  if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else if constexpr (std::is_enum_v<T>) {
    for (const ViewChoice& c : field.choices) {
      if (c.value == int(value)) return c.name;
    }
    return "";  // a value the URL cannot name (--sample_index=resident_space): the default
  } else if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "";  // false: the view's default (the command line's)
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, "%.17g", double(value));
    return buf;
  }
}

// Sets a member from its parameter; false with a one-line *error for a value it cannot take.
template <typename T>
bool SetParameter(const ViewField& field, const std::string& value, T* member, std::string* error) {
  if constexpr (std::is_same_v<T, std::string>) {
    *member = value;
    return true;
  } else {
    if (value.empty()) return true;  // an empty form field: the view's own value stays
    if constexpr (std::is_enum_v<T>) {
      std::string names;
      for (const ViewChoice& c : field.choices) {
        if (value == c.name) {
          *member = T(c.value);
          return true;
        }
        names += (names.empty() ? "" : ", ") + std::string(c.name);
      }
      *error =
          std::string("unknown ") + field.help + " " + field.url + "=" + value + " (" + names + ")";
      return false;
    } else if constexpr (std::is_same_v<T, bool>) {
      if (value == "true" || value == "false") {
        *member = value == "true";
        return true;
      }
    } else {
      char* end = nullptr;
      const double number = strtod(value.c_str(), &end);
      if (*end == '\0' && number == number && (!std::is_integral_v<T> || std::fabs(number) < 1e9)) {
        *member = T(number);
        return true;
      }
    }
    *error = std::string(field.url) + "=" + value + ": not a " +
             (std::is_same_v<T, bool> ? "true/false value" : "number");
    return false;
  }
}

// dump=N / base=N: the index of the dump numbered N.
bool ParseDump(const std::string& name, const std::string& value, ViewQuery* q,
               std::string* error) {
  int* index = name == "dump" ? &q->dump : &q->base;
  if ((name == "base" && value.empty()) || (name == "dump" && value == "all")) {
    *index = -1;
    return true;
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
      numbers =
          std::to_string(q->dump_numbers.front()) + " to " + std::to_string(q->dump_numbers.back());
    }
    *error = name + "=" + value + ": no such dump (the dumps are " + numbers +
             (name == "dump" ? "; all: their sum)" : ")");
    return false;
  }
  *index = found;
  return true;
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

std::string ParameterText(const ViewField& field, const ViewOptions& view) {
  return std::visit([&](auto member) { return ParameterValue(field, view.*member); }, field.member);
}

std::string ViewQuery::Encode() const {
  std::string out;
  for (const ViewField& field : kViewFields) {
    if (field.url == nullptr) continue;
    Append(&out, field.url, ParameterText(field, view));
  }
  auto number = [&](int index) {
    return size_t(index) < dump_numbers.size() ? std::to_string(dump_numbers[size_t(index)]) : "";
  };
  if (dump >= 0) Append(&out, "dump", number(dump));
  if (dump < 0 && dump_numbers.size() > 1) Append(&out, "dump", "all");
  if (base >= 0) Append(&out, "base", number(base));
  Append(&out, "window", window);
  return out;
}

bool ParseViewQuery(const std::multimap<std::string, std::string>& params, ViewQuery* q,
                    std::string* error) {
  for (const auto& [name, value] : params) {
    if (value.size() > kMaxQueryValue) {
      *error = "query parameter " + name.substr(0, 16) + " is longer than " +
               std::to_string(kMaxQueryValue) + " bytes";
      return false;
    }
    if (name == "window") {
      q->window = value;
      continue;
    }
    if (name == "dump" || name == "base") {
      if (!ParseDump(name, value, q, error)) return false;
      continue;
    }
    for (const ViewField& field : kViewFields) {
      if (field.url == nullptr || name != field.url) continue;
      bool ok = std::visit(
          [&](auto member) { return SetParameter(field, value, &(q->view.*member), error); },
          field.member);
      if (!ok) return false;
    }
  }
  return true;
}

}  // namespace heapkit::pprof
