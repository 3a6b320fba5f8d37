#include "pprof-tool/model/value_format.h"

#include <cmath>
#include <cstdio>

namespace heapkit::pprof {

std::string FormatValue(double value, ValueUnit unit, bool show_bytes) {
  char buf[64];
  if (unit == ValueUnit::kObjects || show_bytes) {
    snprintf(buf, sizeof buf, "%.0f", std::round(value));
    if (std::string(buf) == "-0") return "0";
    return buf;
  }
  static const char* const kUnits[] = {"B", "kB", "MB", "GB", "TB", "PB"};
  double mag = std::fabs(value);
  if (std::round(mag) == 0) return "0";
  int u = 0;
  while (mag >= 1024 && u < 5) {
    mag /= 1024;
    ++u;
  }
  const char* sign = value < 0 ? "-" : "";
  if (u == 0) {
    snprintf(buf, sizeof buf, "%s%.0f%s", sign, mag, kUnits[u]);
  } else if (mag >= 100) {
    snprintf(buf, sizeof buf, "%s%.0f%s", sign, mag, kUnits[u]);
  } else {
    snprintf(buf, sizeof buf, "%s%.2f%s", sign, mag, kUnits[u]);
  }
  return buf;
}

std::string FormatPercent(double value, double total) {
  char buf[32];
  if (total == 0) return "0.00%";
  double pct = 100.0 * value / total;
  if (std::fabs(pct) < 0.005) pct = 0;  // never "-0.00%"
  snprintf(buf, sizeof buf, "%.2f%%", pct);
  return buf;
}

}  // namespace heapkit::pprof
