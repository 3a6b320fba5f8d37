// A heapkit legacy heap profile (legacy_writer.h's text) as profile.proto: the one path from
// the text to a profile, for the profile files (HEAP_PROFILE_FORMAT=proto|both, the dumps and
// the peak profiles: proto_profile_file.h) and for the HTTP endpoint's profiles (the endpoint,
// in the on-demand library, calls it through ServerHooks::heap_profile_proto). The text is read
// by heap_profile_text.h, the values come from heap_sample_values.h's tables, the profile is
// built by profile_builder.h. Malloc-free.
//
// The layout follows Go's heap profiles where Go has the data, google tcmalloc's lifetime
// profiles for the rest:
//   - sample types kHeapValues (alloc_objects, alloc_space, inuse_objects, inuse_space), then,
//     when the text's records carry their sampling variance (and no baseline is given: a
//     delta's in-use variance is not known), kVarianceValues (alloc_objects_variance, ...,
//     inuse_space_variance), then, with `lifetimes` and lifetime lines in the text,
//     kLifetimeValues; default_sample_type stays inuse_space;
//   - one sample per record line, with Go's numeric label `bytes` (the line's average size);
//     period_type space/bytes, period = the sampling period (1 in exact mode), so a reader
//     never un-samples again;
//   - one sample per lifetime line on its allocation stack, string labels `lifetime` (the
//     decade: "<1us", "1us-10us", ..., "1000s-1h", ">=1h") and `same_thread` ("true" or
//     "false"; freed objects only), the numeric label `lifetime_ns` (the decade's lower bound);
//     a freed line with the free's stack (HEAP_PROFILE_FREE_STACKS) becomes two samples, as
//     tcmalloc writes its lifetime profiles' stack pairs: allocated_* on the allocation stack,
//     deallocated_* on the free stack, the same labels and a numeric `callstack-pair-id`;
//   - with `comments`, every `# heapkit:` line but the variance lines, which are values (dump
//     reason, time, memory figures, lifetimes, ages, peak time), as a Profile.comment,
//     verbatim, so pprof-tool reads the same views from either file; time_nanos from the dump
//     time line, or for a peak profile the peak's own unix time, unless `time_nanos` is given;
//   - mappings of the executable file-backed lines of MAPPED_LIBRARIES with their build IDs;
//     locations carry addresses only, or their frames with a namer (profile_builder.h).
// With a baseline (the same format, taken earlier) the samples are the differences per stack,
// text − baseline, stacks whose heap values all cancel left out (Go's `seconds=N`); with
// `delta_alloc_only` the in-use values stay absolute (godeltaprof's delta_heap).
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/format/location_namer.h"

namespace heapkit::prof {

class MappedBytes;

struct HeapProtoOptions {
  const char* baseline = nullptr;  // nullptr: no delta
  size_t baseline_size = 0;
  bool delta_alloc_only = false;
  bool lifetimes = false;  // lifetime samples, when the text has lifetime lines
  bool comments = false;   // the comment lines as Profile.comment
  const char* default_sample_type = "inuse_space";
  int64_t time_nanos = 0;  // 0: from the text's dump time (or peak time) line
  int64_t duration_nanos = 0;
  LocationNamer namer{nullptr, nullptr};  // nullptr: addresses only
};

// The un-sampled sums of the text's record lines (after the delta, if any), for /metrics.
struct HeapTotals {
  double inuse_objects = 0, inuse_bytes = 0, alloc_objects = 0, alloc_bytes = 0;
  int64_t sample_period = 0;
  size_t stacks = 0;  // record lines of the text
};

enum class HeapProtoStatus { kOk, kNotAHeapProfile, kOutOfMemory };

// Appends the encoded (not gzipped) Profile to *out (nullptr: the totals only) and fills
// *totals when not null.
HeapProtoStatus HeapTextToProto(const char* text, size_t size, const HeapProtoOptions& options,
                                MappedBytes* out, HeapTotals* totals);

// The same, the Profile handed to `sink` in one piece (nullptr: the totals only): the HTTP
// endpoint's ServerHooks::heap_profile_proto.
HeapProtoStatus WriteHeapProto(const char* text, size_t size, const HeapProtoOptions& options,
                               void (*sink)(void* ctx, const char* data, size_t size), void* ctx,
                               HeapTotals* totals);

}  // namespace heapkit::prof
