#include "profiler/http_endpoint.h"

#include <string.h>

#include <atomic>

#include "alloc/internal/log.h"
#include "alloc/internal/spin_lock.h"
#include "alloc/observer_hooks.h"
#include "alloc/stats.h"
#include "alloc/sampling_period.h"
#include "gperftools/malloc_extension_c.h"
#include "profiler/output/dump_triggers.h"
#include "profiler/output/growth_stacks.h"
#include "profiler/format/heap_profile_encoder.h"
#include "profiler/http/server_hooks.h"
#include "profiler/output/memory_breakdown.h"
#include "profiler/on_demand/on_demand_library.h"
#include "profiler/format/output_sink.h"
#include "profiler/profiler_config.h"
#include "profiler/sample_recorder.h"
#include "profiler/base/profiler_settings.h"

namespace heapkit::check {
// heapcheck/live_leak_check.h; weak: a runtime built without the checker answers 404.
__attribute__((weak)) int BeginLiveLeakCheck(prof::http::LeakCheckAnswer* answer);
__attribute__((weak)) void EndLiveLeakCheck(void (*sink)(void*, const char*, size_t), void* ctx,
                                            prof::http::LeakCheckAnswer* answer);
}  // namespace heapkit::check

namespace heapkit::prof {
namespace {

void HeapSample(http::TextSink sink, void* ctx) {
  if (!SampleRecordingOn()) return;
  CallbackSink out(sink, ctx);
  WriteTableProfile(&out);
}

void GrowthStacks(http::TextSink sink, void* ctx) {
  CallbackSink out(sink, ctx);
  WriteGrowthStacks(&out);
}

void MemoryFigures(http::TextSink sink, void* ctx) {
  CallbackSink out(sink, ctx);
  AppendMemoryBreakdown(&out);
}

// The freed symbolizer's objects leave the server thread's cache and the transfer caches for
// their spans, the spans that became free go to the page heap, and the page heap's free spans
// are returned to the OS: those it had before too (the age rule, page_heap.h, would return
// them within half a second of the program's next allocations; the bytes just freed alone do
// not say which spans they were, and a never-touched span returned frees no memory). A MiB at
// a time, so that the page heap's lock is never held across the madvise of a large free heap,
// and no more than was free at the start (the program frees meanwhile).
void ReturnMemory() {
  alloc::MarkThreadIdle();
  alloc::ReleaseTransferCaches();
  alloc::AllocatorStats stats;
  alloc::GetAllocatorStats(&stats);
  constexpr size_t kStep = size_t{1} << 20;
  for (size_t left = stats.pageheap_free_bytes; left > 0;) {
    const size_t released = alloc::ReleaseToSystem(left < kStep ? left : kStep);
    if (released == 0) break;
    left -= released < left ? released : left;
  }
}

void ServerThreadStarted() { SetThreadRecordingDisabled(true); }

internal::SpinLock g_start_lock;
bool g_started = false;
char g_bound[160];  // "unix:" and a path of up to 107 bytes

}  // namespace

bool StartHttpEndpoint(const char* address, char* message, size_t message_size) {
  internal::SpinLockHolder h(&g_start_lock);
  if (g_started) {
    internal::FormatTo(message, message_size, "the heapkit HTTP server already listens on %s",
                       g_bound);
    return false;
  }
  alloc::SetSamplingPeriodUnlessChosen(kDefaultSampleParameter);
  // The sampling observer and the library are set up with this thread's recording off: what
  // they allocate is the server's, not the program's.
  const bool was_disabled = tls_recording_disabled;
  tls_recording_disabled = true;
  if (!SampleRecordingOn() && alloc::SamplingPeriod() > 0) EnableSampleRecording();
  const OnDemandApi* api = LoadOnDemandLibrary();
  bool ok = false;
  if (api == nullptr) {
    internal::FormatTo(message, message_size,
                       "HEAPKIT_HTTP: the on-demand library is not available");
  } else {
    http::ServerHooks hooks;
    hooks.heap_sample = &HeapSample;
    hooks.heap_profile_proto = &WriteHeapProto;
    hooks.growth_stacks = &GrowthStacks;
    hooks.numeric_property = &MallocExtension_GetNumericProperty;
    hooks.leak_check_begin = check::BeginLiveLeakCheck;  // nullptr when not linked in
    hooks.leak_check_end = check::EndLiveLeakCheck;
    hooks.server_thread_started = &ServerThreadStarted;
    hooks.memory_figures = &MemoryFigures;
    hooks.return_memory = &ReturnMemory;
    hooks.endpoint_heap_bytes = &SetEndpointHeapBytes;
    // Who may ask (http/access_policy.h); unset in an AT_SECURE process, like every variable.
    hooks.allow_users = internal::SettingText(ProfilerSetting("HEAPKIT_HTTP_ALLOW_USERS"));
    hooks.token_file = internal::SettingText(ProfilerSetting("HEAPKIT_HTTP_TOKEN_FILE"));
    hooks.allow_remote = internal::SettingText(ProfilerSetting("HEAPKIT_HTTP_ALLOW_REMOTE"));
    // The whole answer, whatever the size of the caller's buffer.
    char answer[256], rule[256];
    ok = api->start_http_endpoint(address, &hooks, answer, sizeof answer, rule, sizeof rule);
    internal::FormatTo(message, message_size, "%s", answer);
    if (ok) {
      g_started = true;
      internal::FormatTo(g_bound, sizeof g_bound, "%s", answer);
      // Always one line: where, and who may read it.
      internal::Log("HTTP endpoint listening on %s (%s)", answer, rule);
    }
  }
  tls_recording_disabled = was_disabled;
  return ok;
}

void StartHttpEndpointFromEnvironment() {
  const char* raw = internal::SettingText(ProfilerSetting("HEAPKIT_HTTP"));
  if (raw == nullptr || raw[0] == '\0') return;
  char address[256];
  if (strlen(raw) >= sizeof(address)) {
    internal::Log("HEAPKIT_HTTP is too long; the HTTP endpoint is off");
    return;
  }
  memcpy(address, raw, strlen(raw) + 1);
  char message[256];
  if (!StartHttpEndpoint(address, message, sizeof(message))) {
    internal::Log("%s; the HTTP endpoint is off", message);
  }
}

}  // namespace heapkit::prof

// profiler/include/heapkit/http_server.h
extern "C" __attribute__((visibility("default"))) int HeapkitStartHttpServer(const char* address,
                                                                             char* message,
                                                                             size_t message_size) {
  char scratch[256];
  char* out = message != nullptr && message_size > 0 ? message : scratch;
  const size_t out_size = out == scratch ? sizeof scratch : message_size;
  if (address == nullptr || strlen(address) >= 256) {
    heapkit::internal::FormatTo(out, out_size, "HeapkitStartHttpServer: no address, or too long");
    return 0;
  }
  return heapkit::prof::StartHttpEndpoint(address, out, out_size) ? 1 : 0;
}
