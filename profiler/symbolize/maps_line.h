// One line of /proc/<pid>/maps, parsed without allocating: the one parser of the format, shared
// by the leak checker (its live /proc/self/maps, read into mmap'd memory), the symbolizer's
// callers (a profile's MAPPED_LIBRARIES section, the HTTP endpoint's live maps) and pprof-tool's
// profile parser. Header-only and malloc-free, so runtime code (no exceptions, no libstdc++) and
// the tool compile the same function; nothing here may throw (no string_view::substr), so the
// runtime references no libstdc++ symbol at any optimisation level.
//
//   start-limit perms offset dev inode [path]
//   7f1c2a000000-7f1c2a021000 r-xp 00001000 08:01 1234   /usr/lib/libfoo.so
//
// Fields are separated by spaces or tabs; the line may carry leading blanks and trailing blanks
// or '\r'. Addresses and the offset are hex (an optional "0x", at most 16 digits); perms are 3 to
// 5 of "rwxps-"; dev holds a ':'; the inode is any non-empty word; the path is the rest, trimmed
// ("" for an anonymous mapping; "[heap]", "/lib/x.so (deleted)", ... as written). A line that
// does not fit is refused whole, so comment and header lines around a maps section are skipped.
#pragma once

#include <cstdint>
#include <string_view>

#include "alloc/internal/hex_digit.h"
namespace heapkit {

struct MapsLine {
  uint64_t start = 0;
  uint64_t limit = 0;      // exclusive; >= start
  uint64_t offset = 0;     // file offset of `start`
  std::string_view perms;  // "r-xp", as written
  bool readable = false;
  bool writable = false;
  bool executable = false;
  std::string_view path;  // points into the parsed line; "" for anonymous mappings
};

namespace maps_line_internal {

inline bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// The next word (up to a blank) after skipping blanks; *rest is what follows it.
inline std::string_view Word(std::string_view* rest) {
  size_t b = 0;
  while (b < rest->size() && IsBlank((*rest)[b])) ++b;
  size_t e = b;
  while (e < rest->size() && !IsBlank((*rest)[e])) ++e;
  const std::string_view word(rest->data() + b, e - b);
  rest->remove_prefix(e);
  return word;
}

// The whole of `s` as hex: an optional "0x", then 1 to 16 hex digits.
inline bool Hex(std::string_view s, uint64_t* out) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.empty() || s.size() > 16) return false;
  uint64_t v = 0;
  for (char c : s) {
    const int d = internal::HexDigitValue(c);
    if (d < 0) return false;
    v = (v << 4) | unsigned(d);
  }
  *out = v;
  return true;
}

inline std::string_view Trim(std::string_view s) {
  while (!s.empty() && (IsBlank(s.back()) || s.back() == '\r')) s.remove_suffix(1);
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return s;
}

}  // namespace maps_line_internal

// Parses one line (without its newline). False, and *out unspecified, if it is not a maps line.
inline bool ParseMapsLine(std::string_view line, MapsLine* out) {
  using namespace maps_line_internal;
  std::string_view rest = Trim(line);
  const std::string_view range = Word(&rest);
  const size_t dash = range.find('-');
  if (dash == std::string_view::npos || !Hex(std::string_view(range.data(), dash), &out->start) ||
      !Hex(std::string_view(range.data() + dash + 1, range.size() - dash - 1), &out->limit) ||
      out->limit < out->start) {
    return false;
  }
  out->perms = Word(&rest);
  if (out->perms.size() < 3 || out->perms.size() > 5) return false;
  for (char c : out->perms) {
    if (std::string_view("rwxps-").find(c) == std::string_view::npos) return false;
  }
  out->readable = out->perms[0] == 'r';
  out->writable = out->perms[1] == 'w';
  out->executable = out->perms[2] == 'x';
  if (!Hex(Word(&rest), &out->offset)) return false;
  if (Word(&rest).find(':') == std::string_view::npos) return false;  // dev
  if (Word(&rest).empty()) return false;                              // inode
  out->path = Trim(rest);
  return true;
}

}  // namespace heapkit
