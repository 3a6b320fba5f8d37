// Override probe: one executable, many cases; ctest runs each case in its own process, once per
// allocator flavour (LD_PRELOAD of libheapkit_minimal.so / libheapkit.so, static link with
// libheapkit_minimal.a, and the glibc / tcmalloc_minimal references that prove the checks can
// pass on a real allocator).
//
// The probe never links heapkit directly (except in the static flavour): the gperftools C API
// (MallocExtension_*, nallocx) is looked up at run time with dlsym(RTLD_DEFAULT), so the same
// binary runs under any preloaded allocator. HEAPKIT_PROBE_EXPECT=heapkit|tcmalloc|glibc tells a
// case which allocator-specific promises apply; cases that do not apply exit with kSkip (77).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace heapkit::probe {

constexpr int kSkip = 77;

enum class Allocator { kGlibc, kTcmalloc, kHeapkit };
Allocator Expected();
bool ExpectHeapkit();
bool IsStaticFlavour();  // true when linked with libheapkit_minimal.a

// Reports "FAIL file:line: what" plus an optional detail line and exits 1 (stdio flushed).
[[noreturn]] void Fail(const char* file, int line, const char* what, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
[[noreturn]] void Skip(const char* why);

#define PROBE_CHECK(cond)                                                    \
  do {                                                                       \
    if (!(cond)) ::heapkit::probe::Fail(__FILE__, __LINE__, #cond, nullptr); \
  } while (0)
#define PROBE_CHECK_MSG(cond, ...)                                               \
  do {                                                                           \
    if (!(cond)) ::heapkit::probe::Fail(__FILE__, __LINE__, #cond, __VA_ARGS__); \
  } while (0)

// Case registry: each .cc registers its cases with a static CaseRegistrar.
using CaseFn = void (*)(int argc, char** argv);
struct CaseRegistrar {
  CaseRegistrar(const char* name, CaseFn fn);
};
#define PROBE_CASE(name)                                                                  \
  static void ProbeCase_##name(int argc, char** argv);                                    \
  static ::heapkit::probe::CaseRegistrar probe_registrar_##name(#name, ProbeCase_##name); \
  static void ProbeCase_##name([[maybe_unused]] int argc, [[maybe_unused]] char** argv)

// The gperftools-compatible C API of the active allocator; null members when absent (glibc).
struct MallocExt {
  int (*get_numeric)(const char*, size_t*) = nullptr;
  int (*set_numeric)(const char*, size_t) = nullptr;
  void (*get_stats)(char*, int) = nullptr;
  void (*release_free_memory)() = nullptr;
  void (*release_to_system)(size_t) = nullptr;
  int (*get_ownership)(const void*) = nullptr;
  size_t (*get_allocated_size)(const void*) = nullptr;
  size_t (*get_estimated_allocated_size)(size_t) = nullptr;
  void (*mark_thread_idle)() = nullptr;
  void (*mark_thread_busy)() = nullptr;
  size_t (*nallocx)(size_t, int) = nullptr;
};
const MallocExt& Ext();
// Skips the case when the active allocator lacks the C API (glibc) and fails when heapkit is
// expected but a function is missing.
const MallocExt& RequireExt();
// Value of a numeric property; fails the case if the property is unknown.
size_t Property(const char* name);
bool TryProperty(const char* name, size_t* value);

// Resident set size of this process in bytes (/proc/self/statm, read without malloc).
size_t RssBytes();

// Keeps the compiler from reasoning about a pointer (no allocation elision).
inline void Escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

// Deterministic byte pattern keyed by (seed, index).
inline unsigned char PatternByte(uintptr_t seed, size_t i) {
  return static_cast<unsigned char>((seed * 131u + i * 7u + (i >> 8)) ^ 0x5a);
}
void FillPattern(void* p, size_t n, uintptr_t seed);
// Returns the index of the first wrong byte, or n when all match.
size_t FindPatternMismatch(const void* p, size_t n, uintptr_t seed);

// Runs fn in a forked child with stderr (and stdout) captured. Returns the raw wait status;
// *output receives up to cap-1 bytes of the child's combined stderr, NUL-terminated. The child
// is killed after timeout_s seconds (status then reports SIGKILL).
int RunInChild(void (*fn)(void*), void* arg, char* output, size_t cap, int timeout_s);

// Runs bad(arg) in a child; under heapkit it must abort with one "heapkit: attempt to free
// invalid pointer 0x…" line naming `expected` (under glibc: die somehow).
void ExpectFreeDeath(const char* what, void (*bad)(void*), void* arg, uintptr_t expected);

}  // namespace heapkit::probe
