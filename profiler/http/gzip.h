// gzip of a whole buffer (zlib, level 1 like Go's runtime/pprof, no name, mtime 0), for the
// endpoint's answers and, through the on-demand table (on_demand_library.h), the runtime's
// profile.proto files (proto_profile_file.h).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace heapkit::prof::http {

// Where zlib's working memory (~300 KiB) and the output chunk come from. Memory is never freed
// one block at a time: the caller releases its whole arena afterwards. The runtime's dumps
// pass an mmap arena so that nothing calls malloc while a dump may run inside an allocation.
struct GzipMemory {
  void* (*alloc)(void* ctx, size_t bytes);  // nullptr result: out of memory
  void* ctx;
};
using GzipSink = bool (*)(void* ctx, const char* data, size_t length);

// Compresses [data, data + size) and hands the gzip stream to `sink` in chunks. false if zlib
// fails (out of memory) or the sink does.
bool GzipTo(const char* data, size_t size, const GzipMemory& memory, GzipSink sink, void* ctx);

// The same into a string, with zlib's own allocation (the endpoint's thread). false only if
// zlib fails (out of memory).
bool Gzip(std::string_view data, std::string* out);

}  // namespace heapkit::prof::http
