// Formatting of sample values: bytes in readable units (B, kB, MB, GB, TB — powers of 1024,
// like gperftools' pprof) unless show_bytes; object counts as plain integers. Never prints
// "0.0 MB" for a non-zero value: the unit is chosen from the magnitude of the value itself.
#pragma once

#include <string>

namespace heapkit::pprof {

enum class ValueUnit { kBytes, kObjects };

// "1.5MB", "512B", "12.3kB", "-3.0MB", "1234" (objects), "0".
// show_bytes: bytes printed exactly ("1572864B" is NOT used; plain "1572864").
std::string FormatValue(double value, ValueUnit unit, bool show_bytes = false);

// "12.34%" of total; "0.00%" if total is 0.
std::string FormatPercent(double value, double total);

}  // namespace heapkit::pprof
