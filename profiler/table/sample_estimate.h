// The arithmetic of one sampled record: the size key that groups records into buckets, and the
// estimated (un-sampled) bytes behind a record. Header-only; no state.
#pragma once

#include <cstddef>
#include <cstdint>

#include "alloc/sample_weight.h"

namespace heapkit::prof {

// Bucket size key (sampled mode): log2 with two fraction bits, so objects in one bucket differ
// in size by < 19% and the per-line un-sampling is accurate. 0 when every allocation is kept.
inline uint32_t SizeKey(uint64_t size, int64_t rate) {
  if (rate <= 1) return 0;
  if (size < 8) return static_cast<uint32_t>(size);
  int log = 63 - __builtin_clzll(size);
  return static_cast<uint32_t>(8 + (log - 3) * 4 + ((size >> (log - 2)) & 3));
}

// The estimated bytes behind one recorded object of `size` bytes at sampling rate `rate`.
inline int64_t EstimateBytes(size_t size, int64_t rate) {
  if (rate <= 1) return static_cast<int64_t>(size);
  return static_cast<int64_t>(
      alloc::SampleBytesEstimate(static_cast<double>(size), static_cast<double>(rate)));
}

}  // namespace heapkit::prof
