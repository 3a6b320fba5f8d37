// The heap profiler's state object and its dump file names (profiler_state.h).
#include "profiler/profiler_state.h"

#include <string.h>

#include "alloc/internal/log.h"

namespace heapkit::prof {

constinit ProfilerState g_profiler;

void DumpFiles::Begin(const char* prefix) {
  memcpy(base_prefix_, prefix, strlen(prefix) + 1);
  memcpy(prefix_, prefix, strlen(prefix) + 1);
}

void DumpFiles::RenameForChild(int pid) {
  internal::FormatTo(prefix_, sizeof(prefix_), "%s_%d", base_prefix_, pid);
  count_ = 0;
}

namespace {

// "<prefix><infix>NNNN.heap" with `number` padded to four digits (FormatTo has no field
// widths).
void NumberedName(char* out, size_t size, const char* prefix, const char* infix, int number) {
  char seq[16];
  internal::FormatTo(seq, sizeof(seq), "%d", number);
  const char* zeros = &"0000"[strlen(seq) < 4 ? strlen(seq) : 4];
  internal::FormatTo(out, size, "%s%s%s%s.heap", prefix, infix, zeros, seq);
}

}  // namespace

void DumpFiles::NextName(char* out, size_t size) {
  ++count_;
  NumberedName(out, size, prefix_, ".", count_);
}

void DumpFiles::IntervalPeakName(char* out, size_t size) const {
  NumberedName(out, size, prefix_, ".peak.", count_);
}

void DumpFiles::TimelineName(char* out, size_t size) const {
  internal::FormatTo(out, size, "%s.timeline.heap", prefix_);
}

void DumpFiles::PeakName(char* out, size_t size) const {
  internal::FormatTo(out, size, "%s.peak.heap", prefix_);
}

}  // namespace heapkit::prof
