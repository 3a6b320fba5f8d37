// The values of a heap profile's samples, one row per value: the one place where a per-sample
// value is defined (its sample type, its unit and how a line of the legacy text gives it), for
// the profile files and the HTTP endpoint alike (heap_profile_encoder.h). A new value (say, the
// variance of an estimate, for error bars) is one more row; everything else follows the table.
//
//   kHeapValues      one sample per record line: Go's heap sample types, in Go's order, the
//                    line's counts un-sampled as the pprofs un-sample heap_v2 lines
//                    (alloc/sample_weight.h) and truncated like Go's runtime (scaleHeapSample),
//                    so a reader's un-sampled value is never below the file's and a stack
//                    unchanged between two dumps never looks freed in pprof-tool --since;
//   kVarianceValues  with kHeapValues, when the text's records carry their sampling variance
//                    (legacy_writer.h's variance lines): the variance of each of the four
//                    estimates, objects^2 and bytes^2, on the same sample. Variances of
//                    independently sampled objects add, so a reader that sums samples (go pprof
//                    -sample_index=inuse_space_variance) sums them correctly too; rounded, at
//                    least 1 when not 0 (a sampled value never reads as exact), at most INT64_MAX;
//   kLifetimeValues  one sample per lifetime line (object_times_dump.h), tcmalloc's lifetime
//                    profiles' names: freed objects in allocated_* and deallocated_*, objects
//                    live at the dump in allocated_* and censored_allocated_*.
#pragma once

#include <cstdint>

#include "alloc/sample_weight.h"
#include "profiler/format/heap_profile_text.h"
#include "profiler/format/profile_builder.h"

namespace heapkit::prof {

// A record line as its values see it.
struct HeapLine {
  int64_t inuse_count, inuse_bytes, alloc_count, alloc_bytes;  // as sampled
  int64_t period;                                              // 1: exact counts
  alloc::Unsampled inuse, allocated;                           // un-sampled
};

struct HeapValue {
  ProfileValueType type;
  bool in_use;  // a figure of the moment (not cumulative): a delta from a baseline may keep it
  int64_t (*of)(const HeapLine&);
};

inline constexpr HeapValue kHeapValues[] = {
    {{"alloc_objects", "count"},
     false,
     [](const HeapLine& l) { return static_cast<int64_t>(l.allocated.count); }},
    {{"alloc_space", "bytes"},
     false,
     [](const HeapLine& l) { return static_cast<int64_t>(l.allocated.bytes); }},
    {{"inuse_objects", "count"},
     true,
     [](const HeapLine& l) { return static_cast<int64_t>(l.inuse.count); }},
    {{"inuse_space", "bytes"},
     true,
     [](const HeapLine& l) { return static_cast<int64_t>(l.inuse.bytes); }},
};
inline constexpr int kHeapValueCount = sizeof(kHeapValues) / sizeof(kHeapValues[0]);

// A variance as a sample value (see kVarianceValues).
inline int64_t VarianceSampleValue(double v) {
  if (!(v > 0)) return 0;
  if (v >= 9.2e18) return INT64_MAX;
  const auto rounded = static_cast<int64_t>(v + 0.5);
  return rounded > 0 ? rounded : 1;
}

struct VarianceValue {
  ProfileValueType type;
  double (*of)(const HeapTextVariance&);
};

inline constexpr VarianceValue kVarianceValues[] = {
    {{"alloc_objects_variance", "count^2"},
     [](const HeapTextVariance& v) { return v.alloc_count; }},
    {{"alloc_space_variance", "bytes^2"}, [](const HeapTextVariance& v) { return v.alloc_bytes; }},
    {{"inuse_objects_variance", "count^2"},
     [](const HeapTextVariance& v) { return v.inuse_count; }},
    {{"inuse_space_variance", "bytes^2"}, [](const HeapTextVariance& v) { return v.inuse_bytes; }},
};
inline constexpr int kVarianceValueCount = sizeof(kVarianceValues) / sizeof(kVarianceValues[0]);

// Where /metrics' totals (HeapTotals) find Go's four values.
enum HeapValueIndex : int { kAllocObjects, kAllocSpace, kInuseObjects, kInuseSpace };

// One sample of a lifetime line: its objects (scaled like its bytes) and estimated bytes, and
// what the sample stands for.
struct LifetimeSample {
  int64_t objects, bytes;
  bool allocated;    // on the allocation stack
  bool deallocated;  // freed: on the free's stack, or on the allocation stack without one
  bool censored;     // still live at the dump
};

struct LifetimeValue {
  ProfileValueType type;
  int64_t (*of)(const LifetimeSample&);
};

inline constexpr LifetimeValue kLifetimeValues[] = {
    {{"allocated_objects", "count"},
     [](const LifetimeSample& s) { return s.allocated ? s.objects : 0; }},
    {{"allocated_space", "bytes"},
     [](const LifetimeSample& s) { return s.allocated ? s.bytes : 0; }},
    {{"deallocated_objects", "count"},
     [](const LifetimeSample& s) { return s.deallocated ? s.objects : 0; }},
    {{"deallocated_space", "bytes"},
     [](const LifetimeSample& s) { return s.deallocated ? s.bytes : 0; }},
    {{"censored_allocated_objects", "count"},
     [](const LifetimeSample& s) { return s.censored ? s.objects : 0; }},
    {{"censored_allocated_space", "bytes"},
     [](const LifetimeSample& s) { return s.censored ? s.bytes : 0; }},
};
inline constexpr int kLifetimeValueCount = sizeof(kLifetimeValues) / sizeof(kLifetimeValues[0]);

static_assert(kHeapValueCount + kVarianceValueCount + kLifetimeValueCount <=
              ProfileBuilder::kMaxValues);

}  // namespace heapkit::prof
