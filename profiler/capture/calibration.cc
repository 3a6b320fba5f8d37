// The probe functions live in their own section so that their exact address range is known
// (__start_/__stop_ symbols): a captured stack is cut at the first frame inside a probe, and
// every frame before it is an allocator call site.
#include "profiler/capture/calibration.h"

#include <malloc.h>
#include <stdlib.h>

#include <cstdint>
#include <new>

#include "alloc/observer_hooks.h"
#include "profiler/capture/allocator_frame_filter.h"
#include "profiler/capture/stack_capture.h"
#include "alloc/sampling_period.h"

extern "C" char __start_heapkit_calib_text[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_heapkit_calib_text[] __attribute__((weak, visibility("hidden")));

namespace heapkit::prof {

__thread bool tls_calibrating __attribute__((tls_model("initial-exec"))) = false;

namespace {

int probes_seen = 0;

#define HEAPKIT_PROBE __attribute__((noinline, used, section("heapkit_calib_text")))

// Each probe allocates through one entry point and frees it. `volatile` sinks keep the
// compiler from merging or dropping the calls.
void* volatile g_sink;

HEAPKIT_PROBE void ProbeMalloc(size_t n) {
  g_sink = malloc(n);
  free(g_sink);
}
HEAPKIT_PROBE void ProbeCalloc(size_t n) {
  g_sink = calloc(1, n);
  free(g_sink);
}
HEAPKIT_PROBE void ProbeRealloc(size_t n) {
  void* p = realloc(nullptr, n / 2 + 1);
  g_sink = p;
  p = realloc(p, n);
  g_sink = p;
  p = realloc(p, 2 * n);
  g_sink = p;
  free(p);
}
HEAPKIT_PROBE void ProbeNew(size_t n) {
  g_sink = ::operator new(n);
  ::operator delete(g_sink);
}
HEAPKIT_PROBE void ProbeNewArray(size_t n) {
  g_sink = ::operator new[](n);
  ::operator delete[](g_sink);
}
HEAPKIT_PROBE void ProbeNewNothrow(size_t n) {
  g_sink = ::operator new(n, std::nothrow);
  ::operator delete(g_sink);
  g_sink = ::operator new[](n, std::nothrow);
  ::operator delete[](g_sink);
}
HEAPKIT_PROBE void ProbeNewAligned(size_t n) {
  g_sink = ::operator new (n, std::align_val_t{64});
  ::operator delete (g_sink, std::align_val_t{64});
  g_sink = ::operator new[](n, std::align_val_t{64});
  ::operator delete[](g_sink, std::align_val_t{64});
  g_sink = ::operator new (n, std::align_val_t{64}, std::nothrow);
  ::operator delete (g_sink, std::align_val_t{64});
}
HEAPKIT_PROBE void ProbeMemalign(size_t n) {
  void* p = nullptr;
  if (posix_memalign(&p, 64, n) == 0) free(p);
  g_sink = aligned_alloc(64, (n + 63) & ~size_t{63});
  free(g_sink);
  g_sink = memalign(64, n);
  free(g_sink);
  g_sink = valloc(n);
  free(g_sink);
}

bool InProbe(const void* pc) {
  auto v = reinterpret_cast<uintptr_t>(pc);
  return __start_heapkit_calib_text != nullptr &&
         v >= reinterpret_cast<uintptr_t>(__start_heapkit_calib_text) &&
         v < reinterpret_cast<uintptr_t>(__stop_heapkit_calib_text);
}

}  // namespace

void CalibrationSample() {
  void* pcs[kMaxCaptureDepth];
  int n = CaptureStack(pcs, kMaxCaptureDepth, 0);
  for (int i = 0; i < n; ++i) {
    if (InProbe(pcs[i])) {
      for (int j = 0; j < i; ++j) AddAllocatorReturnAddress(pcs[j]);
      ++probes_seen;
      return;
    }
  }
}

int CalibrateAllocatorFrames() {
  if (__start_heapkit_calib_text == nullptr) return 0;
  // Every allocation of the probes sampled; other threads' samples meanwhile have no weight in
  // the profile (alloc/sampling_period.h) and are dropped.
  alloc::ScopedSamplingPeriod exact(1);
  tls_calibrating = true;
  void (*const probes[])(size_t) = {ProbeMalloc,   ProbeCalloc,     ProbeRealloc,    ProbeNew,
                                    ProbeNewArray, ProbeNewNothrow, ProbeNewAligned, ProbeMemalign};
  // Sizes covering every allocator path (small classes, medium, page-level, huge).
  const size_t sizes[] = {24, 200, 3000, 9000, 40000, 300000, 3 << 20};
  // Twice: the first round may be spent while the thread's sampler picks up the new parameter.
  for (int round = 0; round < 2; ++round)
    for (auto* probe : probes)
      for (size_t n : sizes) probe(n);
  tls_calibrating = false;
  g_sink = nullptr;  // a freed block's address left in a global would hide a later leak there
  return probes_seen;
}

}  // namespace heapkit::prof
