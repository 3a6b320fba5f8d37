// gzip framing for profile.proto files (zlib): what go pprof writes and reads.
//   - GzipSerialize is deterministic: no file name, modification time 0, fixed level (1, like
//     Go's runtime/pprof), so the same profile always gives the same bytes, the bytes of the
//     runtime's gzip writer (profiler/http/gzip.h) on the serialized message.
//   - GunzipBounded never holds more than `limit` decompressed bytes: a gzip bomb fails after
//     `limit` bytes, not after exhausting memory. Concatenated gzip members are read like gzip(1).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <google/protobuf/message_lite.h>

namespace heapkit::pprof {

// The two magic bytes every gzip stream starts with.
bool IsGzip(std::string_view data);

// `message` serialized straight into the gzip stream, never held uncompressed: the same bytes
// as profiler/http/gzip.h's Gzip of message.SerializeAsString().
std::string GzipSerialize(const google::protobuf::MessageLite& message);

// Decompresses `data` into *out. False with one line in *error (no file name) on a corrupt or
// truncated stream or when the result would exceed `limit` bytes.
bool GunzipBounded(std::string_view data, size_t limit, std::string* out, std::string* error);

}  // namespace heapkit::pprof
