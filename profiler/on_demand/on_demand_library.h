// The on-demand library: the parts of the runtime that need libunwind, libdw (with libelf and
// its compression libraries) and the C++ runtime, kept out of libheapkit.so's start-up.
//
// A process that preloads libheapkit.so with neither HEAPPROFILE nor HEAPCHECK set only needs
// the allocator, so libheapkit.so depends on libc alone (test
// alloc.e2e.override.full_needs_only_libc). What only a running profiler or leak checker uses lives
// in libheapkit_ondemand.so, installed next to libheapkit.so:
//   * libunwind: the stack-capture fallback for frames the cached CFI unwinder does not handle
//     (stack_capture.cc), and the leak checker's search for exit()'s caller (heapcheck/startup.cc);
//   * the symbolizer (profiler/symbolize, libdw): the leak checker's report.
// LoadOnDemandLibrary() dlopens it when sampling is first enabled (HEAPPROFILE, HEAPCHECK,
// TCMALLOC_SAMPLE_PARAMETER, or the heap-profiler/leak-checker API), and at report time. The
// path is the directory libheapkit.so was loaded from (dladdr of one of its own symbols) plus
// the fixed file name: never a path from the environment, so a privileged (AT_SECURE) process
// loads only the file installed beside the library it already trusts.
//
// The static archive libheapkit.a links these parts directly (on_demand_linked.cc), as before:
// no dlopen, and the dependencies come from `pkg-config --static --libs heapkit`.
//
// The table below is the only interface between the two objects: the library and the runtime
// are built together, and a library whose table does not match (kOnDemandAbiVersion, size) is
// refused with one line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace heapkit {
struct MapsLine;
}  // namespace heapkit

namespace heapkit::pprof {
class Symbolizer;
struct SymbolSearch;
enum class FrameRole : uint8_t;
}  // namespace heapkit::pprof

namespace heapkit::prof {
namespace http {
struct ServerHooks;
}  // namespace http

// Bumped whenever OnDemandApi or the types it passes change.
inline constexpr uint32_t kOnDemandAbiVersion = 8;

struct OnDemandApi {
  uint32_t abi_version;  // kOnDemandAbiVersion
  uint32_t size;         // sizeof(OnDemandApi)

  // libunwind's unw_backtrace with the per-thread cache (set when the library is loaded):
  // async-signal-safe, never calls the allocator's public entry points.
  int (*backtrace)(void** pcs, int max);

  // Unwinds the calling thread's stack up to the frame of the function that starts at
  // function_start (e.g. exit), then one frame more: *sp and regs[0..5] (rbx, rbp, r12..r15 on
  // x86-64) receive its caller's stack pointer and callee-saved registers. false if the
  // function is not on the stack (then *sp and regs are untouched).
  bool (*find_caller_of)(uintptr_t function_start, uintptr_t* sp, uintptr_t* regs);

  // pprof::Symbolizer::ForMappings and pprof::ClassifyFrame (profiler/symbolize).
  std::unique_ptr<pprof::Symbolizer> (*symbolizer_for_mappings)(std::span<const MapsLine> mappings,
                                                                const pprof::SymbolSearch& search,
                                                                std::vector<std::string>* warnings);
  pprof::FrameRole (*classify_frame)(std::string_view function, std::string_view module);

  // HEAPKIT_HTTP and HeapkitStartHttpServer (profiler/http/http_server.h): binds `address` and
  // starts the endpoint's thread with the runtime's hooks (http/server_hooks.h; copied). false
  // with one line in message (NUL-terminated, truncated to message_size); on success message
  // gets the bound address ("host:port", "unix:/path") and rule who may ask ("clients: uid
  // 1000, root; token: none", http/access_policy.h). The caller prints them.
  bool (*start_http_endpoint)(const char* address, const http::ServerHooks* hooks, char* message,
                              size_t message_size, char* rule, size_t rule_size);

  // zlib's gzip of [data, data + size) (http/gzip.h), for the profile.proto files
  // (proto_profile_file.h): zlib's memory from alloc(alloc_ctx, bytes), never freed block by
  // block (the caller drops its arena), the stream to sink in chunks; never calls malloc.
  // false if zlib or the sink fails.
  bool (*gzip)(const char* data, size_t size, void* (*alloc)(void* ctx, size_t bytes),
               void* alloc_ctx, bool (*sink)(void* ctx, const char* data, size_t length),
               void* sink_ctx);
};

// Loads the library once (idempotent, thread-safe) and returns its table; nullptr if it cannot
// be loaded (said once on stderr). It calls dlopen, which allocates and takes the loader's
// lock: never call it from inside the allocator, under an allocator or profiler lock, or from a
// signal handler.
const OnDemandApi* LoadOnDemandLibrary();

// The table if the library is loaded, else nullptr; never loads. For paths that must not
// (stack capture, which runs inside allocations).
const OnDemandApi* OnDemandLibraryIfLoaded();

}  // namespace heapkit::prof

// The library's one exported symbol (on_demand_api.cc).
extern "C" const heapkit::prof::OnDemandApi* heapkit_on_demand_api();
