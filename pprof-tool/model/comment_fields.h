// Readers of the fields of heapkit's comment lines in a heap profile ("# heapkit: lifetime ...",
// "age", "residency", "timeline stack"): decimal counts and lists of "0x<hex>" program counters,
// over a string_view that each call advances past what it read. Header-only; one hex digit
// decoder for the whole project (alloc/internal/hex_digit.h).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "alloc/internal/hex_digit.h"

namespace heapkit::pprof {

inline void SkipSpaces(std::string_view* s) {
  while (!s->empty() && s->front() == ' ') s->remove_prefix(1);
}

// 1 to 19 decimal digits (so no overflow); false, and nothing read, if none.
inline bool ReadDecimal(std::string_view* s, uint64_t* out) {
  size_t i = 0;
  uint64_t v = 0;
  while (i < s->size() && i < 19 && (*s)[i] >= '0' && (*s)[i] <= '9') {
    v = v * 10 + static_cast<uint64_t>((*s)[i] - '0');
    ++i;
  }
  if (i == 0) return false;
  *out = v;
  s->remove_prefix(i);
  return true;
}

// "0x" (or "0X") and 1 to 16 hex digits of either case; false if the prefix or the digits are
// missing. A 17th digit is left in *s (the caller's next check refuses it).
inline bool ReadHexWord(std::string_view* s, uint64_t* out) {
  if (s->size() < 3 || (*s)[0] != '0' || ((*s)[1] != 'x' && (*s)[1] != 'X')) return false;
  size_t i = 2;
  uint64_t v = 0;
  for (; i < s->size() && i < 2 + 16; ++i) {
    const int d = internal::HexDigitValue((*s)[i]);
    if (d < 0) break;
    v = v * 16 + static_cast<uint64_t>(d);
  }
  if (i == 2) return false;
  *out = v;
  s->remove_prefix(i);
  return true;
}

// Space-separated "0x<hex>" words, up to the end or a '|' (left in *s); false on anything else.
inline bool ReadPcList(std::string_view* s, std::vector<uint64_t>* pcs) {
  for (;;) {
    SkipSpaces(s);
    if (s->empty() || s->front() == '|') return true;
    uint64_t pc = 0;
    if (!ReadHexWord(s, &pc)) return false;
    pcs->push_back(pc);
    if (!s->empty() && s->front() != ' ' && s->front() != '|') return false;
  }
}

}  // namespace heapkit::pprof
