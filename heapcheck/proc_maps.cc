#include "heapcheck/proc_maps.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>

namespace heapkit::check {

namespace {

constexpr size_t kFirstBufferBytes = 64 << 10;
constexpr size_t kMostBufferBytes = size_t{1} << 30;
constexpr int kTornReadsRetried = 8;

enum class Pass { kWhole, kBufferFull, kFailed };

// Reads /proc/self/maps from its start into buf[0, capacity - 1), NUL-terminated. Nothing here
// maps or unmaps memory between two read calls: the kernel makes the file a page at a time and
// a change of the address space between two reads may show a mapping twice or in two shapes.
Pass ReadWholeFile(char* buf, size_t capacity, size_t* size) {
  *size = 0;
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Pass::kFailed;
  Pass pass = Pass::kWhole;
  for (;;) {
    if (*size + 1 >= capacity) {
      pass = Pass::kBufferFull;
      break;
    }
    const ssize_t n = read(fd, buf + *size, capacity - 1 - *size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) pass = Pass::kFailed;
    if (n <= 0) break;
    *size += static_cast<size_t>(n);
  }
  close(fd);
  buf[*size] = '\0';
  return pass;
}

}  // namespace

bool ProcMaps::Read() {
  size_t capacity = text_.size() > kFirstBufferBytes ? text_.size() : kFirstBufferBytes;
  for (int torn = 0;;) {
    entries_.Clear();
    if (!text_.Resize(capacity)) return false;
    const Pass pass = ReadWholeFile(text_.data(), capacity, &text_size_);
    if (pass == Pass::kFailed) return false;
    if (pass == Pass::kBufferFull) {
      if (capacity >= kMostBufferBytes) return false;
      capacity *= 2;
      continue;
    }
    if (!ParseText()) return false;
    if (InAddressOrder()) return !entries_.empty();
    // Another thread changed the address space during the read (one the check could not stop,
    // or the world is still running): read again; after a few tries, keep one of each range.
    if (++torn == kTornReadsRetried) {
      PutInAddressOrder();
      return !entries_.empty();
    }
  }
}

bool ProcMaps::ParseText() {
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
  return true;
}

bool ProcMaps::InAddressOrder() const {
  for (size_t i = 1; i < entries_.size(); ++i)
    if (entries_[i].start < entries_[i - 1].limit) return false;
  return true;
}

void ProcMaps::PutInAddressOrder() {
  std::sort(entries_.begin(), entries_.end(),
            [](const MapsLine& a, const MapsLine& b) { return a.start < b.start; });
  size_t kept = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    MapsLine e = entries_[i];
    if (kept > 0 && e.start < entries_[kept - 1].limit) {
      if (e.limit <= entries_[kept - 1].limit) continue;  // inside the one before
      e.start = entries_[kept - 1].limit;
    }
    entries_[kept++] = e;
  }
  entries_.Resize(kept);
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
