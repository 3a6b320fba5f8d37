// The on-demand library's side of on_demand_library.h: libunwind and the symbolizer behind one
// table. Linked into libheapkit_ondemand.so (which exports heapkit_on_demand_api only) and, for
// the static archive, straight into libheapkit.a. Compiled with the symbolizer's flags (normal
// C++ with exceptions), not the runtime's.
#include "profiler/on_demand/on_demand_library.h"

#include <cstdio>

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "profiler/symbolize/allocation_frames.h"
#include "profiler/symbolize/symbolizer.h"
#include "profiler/http/gzip.h"
#include "profiler/http/http_server.h"

namespace heapkit::prof {
namespace {

int Backtrace(void** pcs, int max) { return unw_backtrace(pcs, max); }

__attribute__((noinline)) bool FindCallerOf(uintptr_t function_start, uintptr_t* sp,
                                            uintptr_t* regs) {
  unw_context_t context;
  unw_cursor_t cursor;
  if (unw_getcontext(&context) != 0 || unw_init_local(&cursor, &context) != 0) return false;
  for (int depth = 0; depth < 64; ++depth) {
    unw_proc_info_t info;
    const bool in_function =
        unw_get_proc_info(&cursor, &info) == 0 && info.start_ip == function_start;
    if (unw_step(&cursor) <= 0) return false;
    if (!in_function) continue;
    unw_word_t caller_sp = 0;
    if (unw_get_reg(&cursor, UNW_REG_SP, &caller_sp) != 0 || caller_sp == 0) return false;
#if defined(__x86_64__)
    static const int kCalleeSaved[6] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                                        UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
    for (int i = 0; i < 6; ++i) {
      unw_word_t v = 0;
      regs[i] = unw_get_reg(&cursor, kCalleeSaved[i], &v) == 0 ? v : 0;
    }
#endif
    *sp = caller_sp;
    return true;
  }
  return false;
}

std::unique_ptr<pprof::Symbolizer> SymbolizerForMappings(std::span<const MapsLine> mappings,
                                                         const pprof::SymbolSearch& search,
                                                         std::vector<std::string>* warnings) {
  return pprof::Symbolizer::ForMappings(mappings, search, warnings);
}

pprof::FrameRole ClassifyFrame(std::string_view function, std::string_view module) {
  return pprof::ClassifyFrame(function, module);
}

bool StartHttpEndpoint(const char* address, const http::ServerHooks* hooks, char* message,
                       size_t message_size, char* rule, size_t rule_size) {
  std::string bound, who, error;
  const bool ok = http::StartServer(address, *hooks, &bound, &who, &error);
  snprintf(message, message_size, "%s", ok ? bound.c_str() : error.c_str());
  snprintf(rule, rule_size, "%s", ok ? who.c_str() : "");
  return ok;
}

bool GzipWithArena(const char* data, size_t size, void* (*alloc)(void* ctx, size_t bytes),
                   void* alloc_ctx, bool (*sink)(void* ctx, const char* data, size_t length),
                   void* sink_ctx) {
  return http::GzipTo(data, size, http::GzipMemory{alloc, alloc_ctx}, sink, sink_ctx);
}

constexpr OnDemandApi kApi = {kOnDemandAbiVersion, sizeof(OnDemandApi),    &Backtrace,
                              &FindCallerOf,       &SymbolizerForMappings, &ClassifyFrame,
                              &StartHttpEndpoint,  &GzipWithArena};

}  // namespace
}  // namespace heapkit::prof

extern "C" __attribute__((visibility("default"))) const heapkit::prof::OnDemandApi*
heapkit_on_demand_api() {
  // The global cache takes a lock with signals blocked and is not async-signal-safe (see
  // stack_capture.cc); per-thread caching is set once, before the first capture can use it.
  static const bool policy_set =
      unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD) == 0;
  (void)policy_set;
  return &heapkit::prof::kApi;
}
