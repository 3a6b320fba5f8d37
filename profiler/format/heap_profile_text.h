// The one reader of the profiler's legacy heap-profile text (legacy_writer.h's format, with
// object_times_dump.h's `# heapkit:` lines), for everything that turns that text into
// something else: the profile.proto files and the HTTP endpoint's profiles (heap_profile_proto.h).
// Malloc-free: it reads the text in place and hands each line's fields to a HeapTextVisitor,
// the stacks as arrays on its own stack.
//
// Lines it knows (anything else is skipped):
//   heap profile: ... @ heap_v2/<period>      the header (or "@ heapprofile": period 1, exact)
//   # heapkit: variance <n> <b> <an> <ab>      the sampling variances of the next record's
//                                              estimates (HeapTextRecord::variance)
//   <n>: <b> [<an>: <ab>] @ 0x1 0x2 ...        a record: in-use and allocated counts and bytes
//   # heapkit: lifetime <bin ns> <same|cross|live> <count> <bytes> <estimated> @ <pcs> [| <pcs>]
//   # ...                                      any comment line (the lifetime lines included)
//   MAPPED_LIBRARIES:                          then /proc/self/maps lines, comments after them
// The visitor sees the mappings first (a location names its mapping), then the body's lines in
// order, then the comment lines after the maps.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof {

// More frames than a stack of the profiler has (stack_capture.h's kMaxCaptureDepth): deeper
// stacks are cut here.
inline constexpr int kMaxTextFrames = 256;

struct HeapTextStack {
  const uint64_t* pcs;  // return addresses, innermost first
  int depth;
};

// The sampling variances of a record's four un-sampled estimates (legacy_writer.h).
struct HeapTextVariance {
  double inuse_count = 0, inuse_bytes = 0, alloc_count = 0, alloc_bytes = 0;
};

struct HeapTextRecord {
  int64_t inuse_count, inuse_bytes, alloc_count, alloc_bytes;  // as sampled
  HeapTextStack stack;
  const HeapTextVariance* variance;  // nullptr: the text has none for it
};

struct HeapTextLifetime {
  enum Kind { kSameThread, kCrossThread, kLive };
  int64_t bin_ns;  // the decade's lower bound
  Kind kind;
  int64_t count, bytes, estimated_bytes;
  HeapTextStack stack;
  HeapTextStack free_stack;  // depth 0 when the line has none
};

struct HeapTextMapping {
  uint64_t start, limit, offset;
  const char* path;  // NUL-terminated copy, valid during the call
  size_t path_size;
};

class HeapTextVisitor {
 public:
  virtual void Mapping(const HeapTextMapping&) {}  // executable, file-backed lines only
  virtual void Record(const HeapTextRecord&) {}
  virtual void Lifetime(const HeapTextLifetime&) {}
  // "# ..." without the newline; variance lines are given to their records instead.
  virtual void Comment(const char* /*line*/, size_t /*size*/) {}

 protected:
  ~HeapTextVisitor() = default;
};

// The sampling period of the header line (1 for "@ heapprofile" and an unreadable period); false
// if `text` does not start with a heap profile's header.
bool ReadHeapTextPeriod(const char* text, size_t size, int64_t* period);

// Walks the whole text (see above). false, with nothing visited, if it is not a heap profile.
bool ReadHeapText(const char* text, size_t size, HeapTextVisitor* visitor);

}  // namespace heapkit::prof
