#include "profiler/http/gzip.h"

#include <zlib.h>

#include <cstdlib>

namespace heapkit::prof::http {
namespace {

constexpr size_t kChunk = 64 * 1024;

voidpf ArenaAlloc(voidpf opaque, uInt items, uInt size) {
  const auto* memory = static_cast<const GzipMemory*>(opaque);
  return memory->alloc(memory->ctx, static_cast<size_t>(items) * size);
}
void ArenaFree(voidpf, voidpf) {}  // released with the caller's arena

void* MallocAlloc(void*, size_t bytes) { return malloc(bytes); }

}  // namespace

bool GzipTo(const char* data, size_t size, const GzipMemory& memory, GzipSink sink, void* ctx) {
  z_stream z{};
  z.zalloc = &ArenaAlloc;
  z.zfree = &ArenaFree;
  z.opaque = const_cast<GzipMemory*>(&memory);
  auto* chunk = static_cast<Bytef*>(memory.alloc(memory.ctx, kChunk));
  if (chunk == nullptr) return false;
  // 15 + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return false;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
  bool ok = true;
  int rc = Z_OK;
  while (ok && rc != Z_STREAM_END) {
    // avail_in is 32-bit: feed at most 1 GiB at a time.
    if (z.avail_in == 0 && size > 0) {
      const size_t n = size < (size_t{1} << 30) ? size : (size_t{1} << 30);
      z.avail_in = static_cast<uInt>(n);
      size -= n;
    }
    z.next_out = chunk;
    z.avail_out = static_cast<uInt>(kChunk);
    rc = deflate(&z, size == 0 ? Z_FINISH : Z_NO_FLUSH);
    if (rc == Z_STREAM_ERROR) ok = false;
    const size_t produced = kChunk - z.avail_out;
    if (ok && produced > 0) ok = sink(ctx, reinterpret_cast<const char*>(chunk), produced);
  }
  deflateEnd(&z);
  return ok;
}

bool Gzip(std::string_view data, std::string* out) {
  // Blocks from malloc, freed together when done.
  struct Blocks {
    void* list[64];
    int n = 0;
  } blocks;
  GzipMemory memory{[](void* ctx, size_t bytes) -> void* {
                      auto* b = static_cast<Blocks*>(ctx);
                      if (b->n == 64) return nullptr;
                      return b->list[b->n++] = MallocAlloc(nullptr, bytes);
                    },
                    &blocks};
  out->clear();
  const bool ok = GzipTo(
      data.data(), data.size(), memory,
      [](void* ctx, const char* d, size_t n) {
        static_cast<std::string*>(ctx)->append(d, n);
        return true;
      },
      out);
  for (int i = 0; i < blocks.n; ++i) free(blocks.list[i]);
  return ok;
}

}  // namespace heapkit::prof::http
