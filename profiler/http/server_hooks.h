// What the HTTP endpoint (http_server.h, in the on-demand library) asks of the runtime
// (libheapkit): the runtime fills this table and passes it through OnDemandApi's
// start_http_endpoint. Plain function pointers, so that both sides share only this header.
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/format/heap_profile_encoder.h"  // plain types: HeapProtoOptions, HeapTotals

namespace heapkit::prof::http {

using TextSink = void (*)(void* ctx, const char* data, size_t length);

// What a live leak check request (ServerHooks::leak_check_begin and _end) came to. The runtime
// decides the admission (heapcheck/live_leak_check.h): one check at a time, and a spacing between
// live checks that bounds the share of the program's time they take.
struct LeakCheckAnswer {
  enum Status : int {
    kChecked,  // checked: the profile was written
    kOff,      // HEAPCHECK is off: nothing written
    kFailed,   // the check could not run (threads not listable, out of memory; said on stderr)
    kBusy,     // another check (the program's own, or a live one) is running
    kTooSoon,  // the last live check ended too recently
    kPending,  // begun (leak_check_begin): leak_check_end gives the answer
  };
  Status status = kFailed;
  // kChecked: this check's; kTooSoon: the last live check's (zero if none ran).
  uint64_t bytes = 0;              // leaked
  uint64_t objects = 0;            // leaked
  double seconds = 0;              // the whole check, in the runtime
  double seconds_stopped = 0;      // of which the program's threads were stopped
  int64_t ended_unix_nanos = 0;    // when it ended (CLOCK_REALTIME)
  double retry_after_seconds = 0;  // kBusy, kTooSoon: when to ask again
  int wait_ms = 0;                 // kPending: call leak_check_end by then at the latest
};

struct ServerHooks {
  // The legacy heap profile of the sampled live objects (GetHeapSample's text); empty when
  // sampling is off.
  void (*heap_sample)(TextSink sink, void* ctx) = nullptr;
  // A legacy heap profile (the text of heap_sample, growth_stacks or leak_check_end) as
  // profile.proto, by the runtime's encoder (profiler/heap_profile_encoder.h, the profile
  // files' own): the encoded Profile to `sink` in one piece (nullptr: the totals only), the
  // un-sampled sums in *totals (when not null). The options' namer is called back on this
  // thread for each new location.
  HeapProtoStatus (*heap_profile_proto)(const char* text, size_t size,
                                        const HeapProtoOptions& options, TextSink sink, void* ctx,
                                        HeapTotals* totals) = nullptr;
  // The heap-growth stacks (GetHeapGrowthStacks' text, "@ growthz"); empty if none.
  void (*growth_stacks)(TextSink sink, void* ctx) = nullptr;
  // MallocExtension_GetNumericProperty.
  int (*numeric_property)(const char* name, size_t* value) = nullptr;
  // A whole-program leak check now, if admitted (HEAPCHECK active, no other check running, the
  // spacing since the last live check kept), in two halves so that the server's thread serves
  // others while the check's copy floods. leak_check_begin: *answer kPending when begun, and
  // the descriptor to poll (-1: none); any other status is the answer. leak_check_end, on the
  // same thread once that descriptor is readable or hung up, or at answer.wait_ms at the
  // latest, and always after kPending (the check holds the checker's gate until then): the
  // unreachable objects as a legacy heap profile ("@ heapprofile", exact counts, one line per
  // allocation stack), *answer kChecked or kFailed. nullptr: no checker in this runtime.
  int (*leak_check_begin)(LeakCheckAnswer* answer) = nullptr;
  void (*leak_check_end)(TextSink sink, void* ctx, LeakCheckAnswer* answer) = nullptr;
  // The process's memory figures, profiler/output/memory_breakdown.h's "# heapkit: memory <key>
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
