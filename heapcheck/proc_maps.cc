#include "heapcheck/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace heapkit::check {
namespace {

bool ParseHex(const char*& p, const char* end, uintptr_t* out) {
  uintptr_t v = 0;
  const char* begin = p;
  while (p < end) {
    char c = *p;
    unsigned d;
    if (c >= '0' && c <= '9') d = c - '0';
    else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
    else break;
    v = v * 16 + d;
    ++p;
  }
  *out = v;
  return p != begin;
}

}  // namespace

bool ProcMaps::ParseLine(const char* line, size_t length, MapEntry* e) {
  const char* p = line;
  const char* end = line + length;
  if (!ParseHex(p, end, &e->start) || p >= end || *p++ != '-') return false;
  if (!ParseHex(p, end, &e->end) || p >= end || *p++ != ' ') return false;
  if (end - p < 4) return false;
  e->readable = p[0] == 'r';
  e->writable = p[1] == 'w';
  e->executable = p[2] == 'x';
  p += 4;
  // offset, dev, inode, then optional path
  for (int field = 0; field < 3; ++field) {
    while (p < end && *p == ' ') ++p;
    while (p < end && *p != ' ') ++p;
  }
  while (p < end && *p == ' ') ++p;
  e->path_offset = static_cast<uint32_t>(p - line);
  e->path_length = static_cast<uint32_t>(end - p);
  return e->start < e->end;
}

bool ProcMaps::Read() {
  text_size_ = 0;
  entries_.Clear();
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  for (;;) {
    if (!text_.Reserve(text_size_ + 65536)) {
      close(fd);
      return false;
    }
    text_.Resize(text_size_ + 65536);
    ssize_t n = read(fd, text_.data() + text_size_, 65536 - 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text_size_ += static_cast<size_t>(n);
  }
  close(fd);
  text_[text_size_] = '\0';
  size_t line_start = 0;
  for (size_t i = 0; i < text_size_; ++i) {
    if (text_[i] != '\n') continue;
    MapEntry e;
    if (ParseLine(text_.data() + line_start, i - line_start, &e)) {
      e.path_offset += static_cast<uint32_t>(line_start);
      if (!entries_.PushBack(e)) return false;
    }
    line_start = i + 1;
  }
  return !entries_.empty();
}

const MapEntry* ProcMaps::Find(uintptr_t address) const {
  size_t lo = 0, hi = entries_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (entries_[mid].end <= address) lo = mid + 1;
    else hi = mid;
  }
  if (lo < entries_.size() && entries_[lo].start <= address && address < entries_[lo].end)
    return &entries_[lo];
  return nullptr;
}

bool ProcMaps::AddReadable(uintptr_t start, uintptr_t end, MmapArray<Region>* out) const {
  for (size_t i = 0; i < entries_.size() && start < end; ++i) {
    const MapEntry& e = entries_[i];
    if (e.end <= start) continue;
    if (e.start >= end) break;
    if (!e.readable) continue;
    uintptr_t s = e.start > start ? e.start : start;
    uintptr_t t = e.end < end ? e.end : end;
    if (s < t && !out->PushBack({s, t})) return false;
  }
  return true;
}

bool ProcMaps::CollectUnreadable(MmapArray<Region>* out) const {
  out->Clear();
  uintptr_t covered = 0;  // end of the last readable mapping
  bool ok = true;
  for (size_t i = 0; ok && i < size(); ++i) {
    const MapEntry& e = entries_[i];
    if (!e.readable) continue;
    if (e.start > covered) ok = out->PushBack(Region{covered, e.start});
    if (e.end > covered) covered = e.end;
  }
  return ok && out->PushBack(Region{covered, UINTPTR_MAX});
}

}  // namespace heapkit::check
