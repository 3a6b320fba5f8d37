// HEAPPROFILE: the sampling callbacks, dump triggers, the helper thread and the API behind
// <gperftools/heap-profiler.h>. See README.md for the environment variables.
//
// State and locking:
//  * The sampling callbacks (any thread) touch only the stack table (its own striped locks)
//    and a few atomics; they check the allocation/deallocation/in-use triggers with relaxed
//    loads and, when one fires, try-lock the state lock and dump on the allocating thread.
//  * The state lock (a spin lock) guards the file-name prefix, the dump counter and the
//    trigger baselines. It is held for the whole of a dump; nothing that allocates from the
//    public heap runs under it.
//  * The helper thread (only when HEAP_PROFILE_TIME_INTERVAL or HEAPPROFILESIGNAL is set)
//    sleeps in poll() on a pipe: the signal handler writes one byte to the pipe (the only thing
//    it does), and the poll timeout implements the time interval, so idle processes dump too.
#pragma once

#include <cstdint>

#include "profiler/output_sink.h"

namespace heapkit::prof {

// Reads HEAPPROFILE & co. and starts what they ask for. Called once from the start-up TU.
void ProfilerStartup();

// Registers the sampling observer (idempotent). Afterwards every sampled allocation is in the
// table. Also used by heapcheck/ (declared in sampled_objects.h).
void EnableSampleRecording();

bool StartHeapProfiling(const char* prefix);
void StopHeapProfiling();
bool HeapProfilingOn();
// Dumps now (API HeapProfilerDump). False if profiling is off or the dump failed.
bool DumpHeapProfileNow(const char* reason);

// Writes the table as a legacy profile (heapprofile or heap_v2/<rate> per the current rate).
bool WriteTableProfile(OutputSink* sink);

// Bucket size key (sampled mode): log2 with two fraction bits, so objects in one bucket differ
// in size by < 19% and the per-line un-sampling is accurate. 0 when every allocation is kept.
inline uint32_t SizeKey(uint64_t size, int64_t rate) {
  if (rate <= 1) return 0;
  if (size < 8) return static_cast<uint32_t>(size);
  int log = 63 - __builtin_clzll(size);
  return static_cast<uint32_t>(8 + (log - 3) * 4 + ((size >> (log - 2)) & 3));
}

}  // namespace heapkit::prof
