// Profiler start-up. The full runtime's entry-point object references heapkit_profiler_anchor,
// so linking the static libheapkit.a pulls this object (and with it the whole profiler) in.
//
// At start-up the profiler registers its hooks with the allocator (stack capture, the
// MallocExtension heap-sample provider, heap growth), starts HEAPPROFILE if set, and otherwise
// registers its sampling observer whenever the sample parameter is > 0 (GetHeapSample).
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "alloc/common.h"
#include "alloc/internal/log.h"
#include "alloc/observer_hooks.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/output/growth_stacks.h"
#include "profiler/format/unloaded_modules.h"
#include "alloc/sampling_period.h"
#include "profiler/heap_profiler.h"
#include "profiler/http_endpoint.h"
#include "profiler/format/output_sink.h"
#include "profiler/sample_recorder.h"
#include "profiler/capture/stack_capture.h"
#include "profiler/base/profiler_settings.h"

extern "C" {
__attribute__((visibility("default"))) int heapkit_profiler_anchor = 0;
}

namespace heapkit::prof {
namespace {

// ---- MallocExtension provider ----

void HeapSample(alloc::TextSink sink, void* ctx) {
  if (!SampleRecordingOn()) return;
  CallbackSink out(sink, ctx);
  WriteTableProfile(&out);
}

void HeapGrowthStacks(alloc::TextSink sink, void* ctx) {
  CallbackSink out(sink, ctx);
  WriteGrowthStacks(&out);
}

constexpr alloc::HeapSampleProvider kProvider = {&HeapSample, &HeapGrowthStacks};

// HEAPPROFILE, if set. Like gperftools, we mark the variable in place (high bit of its first
// byte) so that programs exec'd from this one see it and write <prefix>_<pid>.NNNN.heap instead
// of overwriting our files; forked children get the same naming from the fork handler.
HEAPKIT_ALWAYS_RUN_CODE void StartFromEnvironment() {
  char* raw = const_cast<char*>(internal::SettingText(ProfilerSetting("HEAPPROFILE")));
  if (raw == nullptr || raw[0] == '\0') return;
  if (strlen(raw) + 16 >= PATH_MAX) {
    // Checked before the copy below, which would otherwise shorten it silently.
    internal::Log("HEAPPROFILE prefix is too long (%zu bytes); heap profiling is off", strlen(raw));
    return;
  }
  char prefix[PATH_MAX];
  if (static_cast<unsigned char>(raw[0]) & 0x80) {
    internal::FormatTo(prefix, sizeof(prefix), "%c%s_%d", static_cast<char>(raw[0] & 0x7f), raw + 1,
                       static_cast<int>(getpid()));
  } else {
    internal::FormatTo(prefix, sizeof(prefix), "%s", raw);
    raw[0] = static_cast<char>(raw[0] | 0x80);
  }
  StartHeapProfiling(prefix);
}

// Reads HEAPPROFILE & co. and starts what they ask for; once, from the constructor below.
HEAPKIT_ALWAYS_RUN_CODE void ProfilerStartup() {
  HEAPKIT_ALWAYS_WRITTEN_DATA static bool done = false;
  if (done) return;
  done = true;
  alloc::SetStackCaptureHook(&CaptureStack);
  alloc::SetHeapSampleProvider(&kProvider);
  // Locks taken whether or not a profile is being collected get their fork handlers now.
  RegisterGrowthForkHandlers();
  RegisterUnloadedModulesForkHandlers();
  alloc::SetHeapGrowthHook(&OnHeapGrowth);
  StartFromEnvironment();
  if (!SampleRecordingOn() && alloc::SamplingPeriod() > 0) EnableSampleRecording();
  StartHttpEndpointFromEnvironment();
}

}  // namespace
}  // namespace heapkit::prof

namespace {

// High priority: HEAPPROFILE starts before ordinary constructors allocate, so their
// allocations are profiled. (101 is the first priority available to programs.)
__attribute__((constructor(101))) void HeapkitProfilerInit() { heapkit::prof::ProfilerStartup(); }

}  // namespace
