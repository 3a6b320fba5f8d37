// One hexadecimal digit's value, for the malloc-free readers of /proc files and of heap
// profiles (the runtime's and pprof-tool's alike): 0..15, or -1 for a character that is not a
// hex digit (either case).
#pragma once

namespace heapkit::internal {

constexpr int HexDigitValue(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

}  // namespace heapkit::internal
