// What the HTTP endpoint (http_server.h, in the on-demand library) asks of the runtime
// (libheapkit): the runtime fills this table and passes it through OnDemandApi's
// start_http_endpoint. Plain function pointers, so that both sides share only this header.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::prof::http {

using TextSink = void (*)(void* ctx, const char* data, size_t length);

struct ServerHooks {
  // The legacy heap profile of the sampled live objects (GetHeapSample's text); empty when
  // sampling is off.
  void (*heap_sample)(TextSink sink, void* ctx) = nullptr;
  // The heap-growth stacks (GetHeapGrowthStacks' text, "@ growthz"); empty if none.
  void (*growth_stacks)(TextSink sink, void* ctx) = nullptr;
  // MallocExtension_GetNumericProperty.
  int (*numeric_property)(const char* name, size_t* value) = nullptr;
  // A whole-program leak check now (HEAPCHECK active): writes the unreachable objects as a
  // legacy heap profile ("@ heapprofile", exact counts, one line per allocation stack) and
  // returns 1; 0 when HEAPCHECK is off, -1 when the check could not run. *bytes / *objects get
  // the leaked totals. nullptr: no checker in this runtime.
  int (*leak_profile)(TextSink sink, void* ctx, uint64_t* bytes, uint64_t* objects) = nullptr;
  // The process's memory figures, profiler/memory_breakdown.h's "# heapkit: memory <key>
  // <bytes>" lines (what partitions RSS for /metrics); nullptr: none.
  void (*memory_figures)(TextSink sink, void* ctx) = nullptr;
  // Returns to the OS the heap the server's thread has just freed: its thread cache and the
  // transfer caches go back to the spans, and the page heap's free spans are released.
  void (*return_memory)() = nullptr;
  // Told the heap bytes the endpoint keeps between answers whenever they change (the dumps'
  // memory figures count them apart: memory_breakdown.h's heapkit_endpoint).
  void (*endpoint_heap_bytes)(uint64_t bytes) = nullptr;
  // Called once on the server's thread before it serves: marks the thread's allocations as
  // not recorded by the profiler (sample_recorder.h), so scrapes never show in the profiles.
  void (*server_thread_started)() = nullptr;

  // Who may ask (access_policy.h), as the runtime read them from its environment (nullptr when
  // unset, and in an AT_SECURE process): HEAPKIT_HTTP_ALLOW_USERS, HEAPKIT_HTTP_TOKEN_FILE,
  // HEAPKIT_HTTP_ALLOW_REMOTE. Read while the server starts, never after.
  const char* allow_users = nullptr;
  const char* token_file = nullptr;
  const char* allow_remote = nullptr;
};

}  // namespace heapkit::prof::http
