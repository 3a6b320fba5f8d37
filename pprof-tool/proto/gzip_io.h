// gzip framing for profile.proto files (zlib): what go pprof writes and reads.
//   - GzipCompress is deterministic: no file name, modification time 0, fixed level (1), so the
//     same profile always gives the same bytes.
//   - GunzipBounded never holds more than `limit` decompressed bytes: a gzip bomb fails after
//     `limit` bytes, not after exhausting memory. Concatenated gzip members are read like gzip(1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace heapkit::pprof {

// The two magic bytes every gzip stream starts with.
bool IsGzip(std::string_view data);

std::string GzipCompress(std::string_view data);

// Decompresses `data` into *out. False with one line in *error (no file name) on a corrupt or
// truncated stream or when the result would exceed `limit` bytes.
bool GunzipBounded(std::string_view data, size_t limit, std::string* out, std::string* error);

}  // namespace heapkit::pprof
