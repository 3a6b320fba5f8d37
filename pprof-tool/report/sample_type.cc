#include "pprof-tool/report/sample_type.h"

namespace heapkit::pprof {

const char* SampleTypeName(SampleType t) {
  switch (t) {
    case SampleType::kInuseSpace: return "inuse_space";
    case SampleType::kInuseObjects: return "inuse_objects";
    case SampleType::kAllocSpace: return "alloc_space";
    case SampleType::kAllocObjects: return "alloc_objects";
    case SampleType::kResidentSpace: return "resident_space";
    case SampleType::kSwappedSpace: return "swapped_space";
    case SampleType::kStrandedSpace: return "stranded_space";
  }
  return "?";
}

ValueUnit SampleTypeUnit(SampleType t) {
  return t == SampleType::kInuseObjects || t == SampleType::kAllocObjects ? ValueUnit::kObjects
                                                                          : ValueUnit::kBytes;
}

double SampleValue(const RawSample& s, SampleType t) { return SelectValue(s.value, t); }

double SelectValue(const SampleValues& v, SampleType t) {
  switch (t) {
    case SampleType::kInuseSpace: return v.inuse_bytes;
    case SampleType::kInuseObjects: return v.inuse_objects;
    case SampleType::kAllocSpace: return v.alloc_bytes;
    case SampleType::kAllocObjects: return v.alloc_objects;
    case SampleType::kResidentSpace: return v.resident_bytes;
    case SampleType::kSwappedSpace: return v.swapped_bytes;
    case SampleType::kStrandedSpace: return v.stranded_bytes;
  }
  return 0;
}

}  // namespace heapkit::pprof
