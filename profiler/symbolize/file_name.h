// The last component of a path ("/usr/lib/libc.so.6" → "libc.so.6"), for everything that names
// a file by its base name: the symbolizer's placeholder frames and pprof-tool's titles, labels,
// dump descriptions and binary matching.
#pragma once

#include <string>

namespace heapkit::pprof {

inline std::string Basename(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

}  // namespace heapkit::pprof
