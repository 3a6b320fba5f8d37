#include "alloc/internal/env.h"

#include <cmath>
#include <cstring>

#include "alloc/internal/log.h"
#include "alloc/internal/sections.h"

extern char** environ;

namespace heapkit::internal {
namespace {

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(const char* a, const char* b) {
  while (*a && *b) {
    if (Lower(*a++) != Lower(*b++)) return false;
  }
  return *a == *b;
}

}  // namespace

const char* PrintableValue(const char* text, char* buf, size_t size) {
  // Control characters would split the one-line warning (or forge a line of their own), and a
  // huge value would bury it: replace them with '?' and cut the value, saying so.
  size_t n = 0;
  const size_t keep = size > 4 ? size - 4 : 0;
  for (; text[0] != '\0' && n < keep; ++text) {
    const unsigned char c = static_cast<unsigned char>(*text);
    buf[n++] = c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  }
  if (*text != '\0' && size >= 4) {
    buf[n++] = '.';
    buf[n++] = '.';
    buf[n++] = '.';
  }
  if (size > 0) buf[n < size ? n : size - 1] = '\0';
  return buf;
}

HEAPKIT_ALWAYS_RUN_CODE const char* EnvRaw(const char* name) {
  if (environ == nullptr || SecureExecution()) return nullptr;
  size_t n = strlen(name);
  for (char** e = environ; *e != nullptr; ++e) {
    if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
  }
  return nullptr;
}

bool ParseInt64(const char* text, bool allow_suffix, int64_t* out) {
  const char* p = text;
  while (*p == ' ' || *p == '\t') ++p;
  bool negative = false;
  if (*p == '-' || *p == '+') negative = (*p++ == '-');
  if (*p < '0' || *p > '9') return false;
  unsigned __int128 value = 0;
  while (*p >= '0' && *p <= '9') {
    value = value * 10 + static_cast<unsigned>(*p++ - '0');
    if (value > static_cast<unsigned __int128>(INT64_MAX) + 1) return false;
  }
  if (allow_suffix && *p != '\0') {
    unsigned shift = 0;
    switch (Lower(*p)) {
      case 'k': shift = 10; break;
      case 'm': shift = 20; break;
      case 'g': shift = 30; break;
      default: return false;
    }
    ++p;
    if (Lower(*p) == 'b') ++p;  // accept 64MB / 64kb
    value <<= shift;
  }
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '\0') return false;
  if (negative) {
    if (value > static_cast<unsigned __int128>(INT64_MAX) + 1) return false;
    *out = static_cast<int64_t>(-static_cast<__int128>(value));
  } else {
    if (value > static_cast<unsigned __int128>(INT64_MAX)) return false;
    *out = static_cast<int64_t>(value);
  }
  return true;
}

// 10^|exponent| by binary exponentiation (libc alone, no libm); |exponent| <= 308.
static double PowerOfTen(int64_t exponent) {
  double result = 1, base = 10;
  for (uint64_t e = exponent < 0 ? -exponent : exponent; e != 0; e >>= 1, base *= base) {
    if (e & 1) result *= base;
  }
  return result;
}

bool ParseDouble(const char* text, double* out) {
  // Minimal, locale-free decimal parser: [+-]digits[.digits][e[+-]digits]
  const char* p = text;
  while (*p == ' ' || *p == '\t') ++p;
  double sign = 1;
  if (*p == '-' || *p == '+') sign = (*p++ == '-') ? -1 : 1;
  double value = 0;
  bool any = false;
  while (*p >= '0' && *p <= '9') {
    value = value * 10 + (*p++ - '0');
    any = true;
  }
  if (*p == '.') {
    ++p;
    double scale = 0.1;
    while (*p >= '0' && *p <= '9') {
      value += (*p++ - '0') * scale;
      scale /= 10;
      any = true;
    }
  }
  if (!any) return false;
  if (*p == 'e' || *p == 'E') {
    ++p;
    int64_t exponent;
    char buf[16];
    size_t i = 0;
    while (*p && i + 1 < sizeof(buf)) buf[i++] = *p++;
    buf[i] = '\0';
    if (*p != '\0' || !ParseInt64(buf, false, &exponent) || exponent > 308 || exponent < -308)
      return false;
    value = exponent < 0 ? value / PowerOfTen(exponent) : value * PowerOfTen(exponent);
  }
  while (*p == ' ' || *p == '\t') ++p;
  if (*p != '\0' || !std::isfinite(value)) return false;
  *out = sign * value;
  return true;
}

bool ParseBool(const char* text, bool* out) {
  static const char* const kTrue[] = {"1", "true", "yes", "on", "t", "y"};
  static const char* const kFalse[] = {"0", "false", "no", "off", "f", "n"};
  for (const char* t : kTrue)
    if (EqualsIgnoreCase(text, t)) {
      *out = true;
      return true;
    }
  for (const char* f : kFalse)
    if (EqualsIgnoreCase(text, f)) {
      *out = false;
      return true;
    }
  return false;
}

bool EnvInt64Given(const char* name, int64_t default_value, int64_t min_value, int64_t max_value,
                   bool allow_suffix, int64_t* out) {
  *out = default_value;
  const char* text = EnvRaw(name);
  if (text == nullptr || *text == '\0') return false;
  int64_t value;
  char shown[kPrintableValueSize];
  if (!ParseInt64(text, allow_suffix, &value)) {
    Log("ignoring %s='%s': not an integer%s; using default %lld", name,
        PrintableValue(text, shown, sizeof(shown)),
        allow_suffix ? " (optionally with k/m/g suffix)" : "",
        static_cast<long long>(default_value));
    return false;
  }
  if (value < min_value || value > max_value) {
    Log("ignoring %s='%s': must be between %lld and %lld; using default %lld", name,
        PrintableValue(text, shown, sizeof(shown)), static_cast<long long>(min_value),
        static_cast<long long>(max_value), static_cast<long long>(default_value));
    return false;
  }
  *out = value;
  return true;
}

int64_t EnvInt64(const char* name, int64_t default_value, int64_t min_value, int64_t max_value,
                 bool allow_suffix) {
  int64_t value;
  EnvInt64Given(name, default_value, min_value, max_value, allow_suffix, &value);
  return value;
}

double EnvDouble(const char* name, double default_value, double min_value, double max_value) {
  const char* text = EnvRaw(name);
  if (text == nullptr || *text == '\0') return default_value;
  double value;
  if (!ParseDouble(text, &value) || value < min_value || value > max_value) {
    // %f is not supported by the malloc-free formatter: print bounds as integers.
    char shown[kPrintableValueSize];
    Log("ignoring %s='%s': must be a number between %lld and %lld; using the default", name,
        PrintableValue(text, shown, sizeof(shown)), static_cast<long long>(min_value),
        static_cast<long long>(max_value));
    return default_value;
  }
  return value;
}

bool EnvBool(const char* name, bool default_value) {
  const char* text = EnvRaw(name);
  if (text == nullptr || *text == '\0') return default_value;
  bool value;
  if (!ParseBool(text, &value)) {
    char shown[kPrintableValueSize];
    Log("ignoring %s='%s': expected true/false, 1/0, yes/no or on/off; using default %s", name,
        PrintableValue(text, shown, sizeof(shown)), default_value ? "true" : "false");
    return default_value;
  }
  return value;
}

}  // namespace heapkit::internal
