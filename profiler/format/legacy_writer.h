// Writer for the legacy gperftools heap-profile text format. Used by the
// HEAPPROFILE dumps, GetHeapProfile/GetHeapSample, and by heapcheck/ for its *-end.heap file.
//
//   heap profile: <inuse_n>: <inuse_bytes> [<alloc_n>: <alloc_bytes>] @ heapprofile|heap_v2/<R>
//   [# heapkit: dump reason: <why this dump was written, one line>]
//   [# heapkit: dump time: <unix seconds>.<milliseconds> pid <pid>]     (with a reason only)
//   [# heapkit: memory <key> <bytes>  ... (memory_breakdown.h)]
//   [# heapkit: variance <inuse n> <inuse bytes> <alloc n> <alloc bytes>]   (sampled records)
//        <n>: <bytes> [<n>: <bytes>] @ 0x<pc> 0x<pc> ...      (return addresses, leaf first)
//   <blank line>
//   MAPPED_LIBRARIES:
//   <the /proc/self/maps lines, verbatim>
//   [# heapkit: unloaded modules ... and the maps lines of dlclose()d modules]
//   [# heapkit: end of dump]                                              (with a reason only)
//
// Rules both pprofs rely on: the header is the first line (no comment before it, nothing after
// its last field: google-pprof takes the rest of the line as the profile type), hex is
// lowercase with 0x, maps lines carry their offsets (we copy /proc/self/maps verbatim).
// `heap_v2/<R>` lines carry raw sampled counts (readers un-sample, see sample_weight.h);
// `heapprofile` lines carry exact counts. Header totals are the sums of the lines written.
// Comment lines ('#') between the header and MAPPED_LIBRARIES are skipped by both pprofs
// (google-pprof's sample loop ignores lines that are not records, go pprof's parseHeap skips
// comments), so the dump reason, time and pid ride there, and so does a record's sampling
// variance: a `# heapkit: variance` line just before the record it belongs to gives the
// variances of the record's four un-sampled estimates (objects^2 and bytes^2: the
// Horvitz-Thompson sums of alloc::SampleVarianceOf over its samples), as decimal numbers
// ("12.5", "3.75e+18"). Before, not after, so that a streaming reader (heap_profile_encoder.h)
// has it when the record comes. Exact profiles have none (sigma 0).
//
// Records come from a RecordSource, called twice: once to sum the header totals, once to write
// the lines (the stream is never rewound, so any sink works). Sources must produce the same
// records both times; a concurrently-mutating table can make the two passes differ slightly,
// which readers tolerate (both pprofs recompute totals from the lines).
#pragma once

#include <cstdint>

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

// The sampling variances of a sampled record's un-sampled estimates (see above).
struct RecordVariance {
  double inuse_count, inuse_bytes, alloc_count, alloc_bytes;
};

struct RecordCounts {
  int64_t inuse_count;
  int64_t inuse_bytes;
  int64_t alloc_count;
  int64_t alloc_bytes;
  const RecordVariance* variance = nullptr;  // nullptr: none recorded (no variance line)
};

enum class ProfileKind {
  kHeapExact,    // "@ heapprofile": exact counts
  kHeapSampled,  // "@ heap_v2/<rate>": raw sampled counts
  kGrowth,       // "@ growthz": heap growth stacks (MallocExtension::GetHeapGrowthStacks)
};

using RecordVisitor = void (*)(void* visit_ctx, const RecordCounts& counts, const void* const* pcs,
                               int depth);
using RecordSource = void (*)(void* source_ctx, RecordVisitor visit, void* visit_ctx);

struct LegacyProfile {
  ProfileKind kind = ProfileKind::kHeapExact;
  int64_t sample_rate = 0;  // for kHeapSampled
  RecordSource source = nullptr;
  void* source_ctx = nullptr;
  bool write_mapped_libraries = true;
  bool skip_empty_records = true;  // records with all four counts zero are left out
  // Why the dump was written ("1026 MB allocated cumulatively, 5 MB currently in use"); written
  // as the comment line after the header, control characters as spaces. nullptr or "": none.
  const char* reason = nullptr;
  // Writes more '#' comment lines after the reason (memory_breakdown.h); nullptr: none.
  void (*append_comments)(OutputSink* sink) = nullptr;
};

// Streams the whole profile to `sink` and flushes it. False if the sink failed.
bool WriteLegacyProfile(OutputSink* sink, const LegacyProfile& profile);

// Writes the profile to `path` atomically and safely (alloc/internal/safe_file.h): a new
// temporary beside it, mode 0600, O_EXCL|O_NOFOLLOW, is written, closed and renamed over
// `path`, so `path` never holds a partial profile; a `path` that is a symbolic link, not a
// regular file, or another user's file is refused (ELOOP, EINVAL, EPERM). On failure returns
// false with *error = errno and removes the temporary.
// Never writes past the soft RLIMIT_FSIZE (`ulimit -f`): fails with EFBIG instead of letting
// the kernel kill the program with SIGXFSZ.
bool WriteLegacyProfileFile(const char* path, const LegacyProfile& profile, int* error);

// The same steps for any content: `write` fills the sink (false: failed).
bool WriteFileAtomically(const char* path, bool (*write)(void* ctx, FdSink* sink), void* ctx,
                         int* error);

// Appends /proc/self/maps verbatim, then the modules dlclose()d since that are no longer mapped
// (unloaded_modules.h). False if the maps could not be read.
bool AppendProcMaps(OutputSink* sink);

}  // namespace heapkit::prof
