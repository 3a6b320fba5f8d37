// Start-up calibration of allocator frames for static linking (see allocator_frame_filter.h).
#pragma once

namespace heapkit::prof {

// True on a thread while it runs calibration probes: the sampling callback then hands the
// sample to CalibrationSample() instead of recording it.
extern __thread bool tls_calibrating __attribute__((tls_model("initial-exec")));

// Called from the sampling callback while calibrating.
void CalibrationSample();

// Makes sampled allocations through every allocator entry point (sampling every allocation
// for the duration) and records the allocator return addresses seen. Returns how many probes
// were observed. Start-up only (single-threaded use of the sample parameter).
int CalibrateAllocatorFrames();

}  // namespace heapkit::prof
