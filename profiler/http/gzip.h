// gzip of a whole buffer (zlib, level 1 like Go's runtime/pprof, no name, mtime 0).
#pragma once

#include <string>
#include <string_view>

namespace heapkit::prof::http {

// false only if zlib fails (out of memory).
bool Gzip(std::string_view data, std::string* out);

}  // namespace heapkit::prof::http
