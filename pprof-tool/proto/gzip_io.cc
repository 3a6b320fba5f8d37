#include "pprof-tool/proto/gzip_io.h"

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <zlib.h>

#include <algorithm>
#include <climits>

namespace heapkit::pprof {

bool IsGzip(std::string_view data) {
  return data.size() >= 2 && static_cast<unsigned char>(data[0]) == 0x1f &&
         static_cast<unsigned char>(data[1]) == 0x8b;
}

std::string GzipSerialize(const google::protobuf::MessageLite& message) {
  namespace io = google::protobuf::io;
  std::string out;
  {
    io::StringOutputStream sink(&out);
    io::GzipOutputStream::Options options;  // gzip framing with zlib's default header
    options.compression_level = Z_BEST_SPEED;
    io::GzipOutputStream gzip(&sink, options);
    message.SerializeToZeroCopyStream(&gzip);
    gzip.Close();
  }
  return out;
}

bool GunzipBounded(std::string_view data, size_t limit, std::string* out, std::string* error) {
  out->clear();
  z_stream z{};
  if (inflateInit2(&z, 15 + 16) != Z_OK) {
    *error = "cannot initialize zlib";
    return false;
  }
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(std::min<size_t>(data.size(), UINT_MAX));
  size_t in_left = data.size() - z.avail_in;
  constexpr size_t kChunk = size_t{1} << 20;
  bool ok = true;
  for (;;) {
    if (out->size() >= limit) {
      *error = "expected at most " + std::to_string(limit >> 20) +
               " MiB of decompressed data, found more (a gzip bomb?)";
      ok = false;
      break;
    }
    size_t used = out->size();
    size_t grow = std::min(kChunk, limit - used);
    out->resize(used + grow);
    z.next_out = reinterpret_cast<Bytef*>(out->data() + used);
    z.avail_out = static_cast<uInt>(grow);
    int rc = inflate(&z, Z_NO_FLUSH);
    out->resize(used + grow - z.avail_out);
    if (z.avail_in == 0 && in_left > 0) {
      z.avail_in = static_cast<uInt>(std::min<size_t>(in_left, UINT_MAX));
      in_left -= z.avail_in;
    }
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      inflateReset(&z);  // another gzip member follows (concatenated files), as gzip(1) reads
      continue;
    }
    if (rc == Z_BUF_ERROR && z.avail_in == 0) {
      *error = "expected more gzip data, found end of file (truncated?)";
      ok = false;
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      *error = std::string("expected gzip data, found a corrupt stream (") +
               (z.msg ? z.msg : "zlib error") + ")";
      ok = false;
      break;
    }
  }
  inflateEnd(&z);
  if (!ok) out->clear();
  return ok;
}

}  // namespace heapkit::pprof
