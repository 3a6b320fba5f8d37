// Which of a sample's values a view shows (--inuse_space ..., --sample_index, the web UI's si=).
#pragma once

#include "pprof-tool/model/profile.h"
#include "pprof-tool/model/value_format.h"

namespace heapkit::pprof {

enum class SampleType {
  kInuseSpace,
  kInuseObjects,
  kAllocSpace,
  kAllocObjects,
  kResidentSpace,
  kSwappedSpace,
  kStrandedSpace,  // heapkit dumps, HEAP_PROFILE_RESIDENCY=1
};

// go pprof's name ("inuse_space", ...).
const char* SampleTypeName(SampleType t);

// Bytes or objects.
ValueUnit SampleTypeUnit(SampleType t);

// Value of one sample for the chosen type.
double SampleValue(const RawSample& s, SampleType t);
// The member of `v` that type `t` selects (a sample's values or its variances).
double SelectValue(const SampleValues& v, SampleType t);

}  // namespace heapkit::pprof
