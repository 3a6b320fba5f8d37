#include "heapcheck/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

namespace heapkit::check {

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
    MapsLine e;
    if (ParseMapsLine(std::string_view(text_.data() + line_start, i - line_start), &e) &&
        e.start < e.limit && !entries_.PushBack(e)) {
      return false;
    }
    line_start = i + 1;
  }
  return !entries_.empty();
}

const MapsLine* ProcMaps::Find(uintptr_t address) const {
  size_t lo = 0, hi = entries_.size();
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (entries_[mid].limit <= address)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < entries_.size() && entries_[lo].start <= address && address < entries_[lo].limit)
    return &entries_[lo];
  return nullptr;
}

bool ProcMaps::AddReadable(uintptr_t start, uintptr_t end, MmapArray<Region>* out) const {
  for (size_t i = 0; i < entries_.size() && start < end; ++i) {
    const MapsLine& e = entries_[i];
    if (e.limit <= start) continue;
    if (e.start >= end) break;
    if (!e.readable) continue;
    uintptr_t s = e.start > start ? e.start : start;
    uintptr_t t = e.limit < end ? e.limit : end;
    if (s < t && !out->PushBack({s, t})) return false;
  }
  return true;
}

bool ProcMaps::CollectUnreadable(MmapArray<Region>* out) const {
  out->Clear();
  uintptr_t covered = 0;  // end of the last readable mapping
  bool ok = true;
  for (size_t i = 0; ok && i < size(); ++i) {
    const MapsLine& e = entries_[i];
    if (!e.readable) continue;
    if (e.start > covered) ok = out->PushBack(Region{covered, e.start});
    if (e.limit > covered) covered = e.limit;
  }
  return ok && out->PushBack(Region{covered, UINTPTR_MAX});
}

}  // namespace heapkit::check
