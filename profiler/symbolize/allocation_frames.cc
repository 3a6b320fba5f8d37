// The table of allocation-path frames (see allocation_frames.h for the roles and the rule).
#include "profiler/symbolize/allocation_frames.h"

namespace heapkit::pprof {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Libraries that are allocators: every frame inside them.
constexpr std::string_view kAllocatorLibraries[] = {"libtcmalloc", "libheapkit", "libjemalloc"};

// The name lists stay packed, several names to a line (clang-format would put them one per line).
// clang-format off
// The C allocation entry points and allocator internals, by exact name.
constexpr std::string_view kAllocatorFunctions[] = {
    "malloc", "calloc", "realloc", "free", "cfree", "memalign", "posix_memalign",
    "aligned_alloc", "valloc", "pvalloc", "reallocarray", "__libc_malloc", "__libc_calloc",
    "__libc_realloc", "__libc_memalign", "__posix_memalign", "do_malloc", "do_memalign",
    "DoSampledAllocation", "cpp_alloc", "__builtin_new", "__builtin_vec_new",
    "__builtin_delete", "__builtin_vec_delete"};

// Name prefixes: operator new/delete, tcmalloc and heapkit internals, and the C++ standard
// library (libstdc++'s std:: and __gnu_cxx::, libc++'s std::__1:: is inside std::).
constexpr std::string_view kAllocatorPrefixes[] = {
    "operator new", "operator delete", "tc_", "tcmalloc::", "heapkit_", "heapkit::alloc::",
    "heapkit::prof::", "(anonymous namespace)::do_malloc", "(anonymous namespace)::do_memalign",
    "(anonymous namespace)::cpp_", "(anonymous namespace)::tc_", "std::", "__gnu_cxx::"};

// libc functions that return a newly allocated copy or buffer to their caller. Compared with
// the leading underscores and glibc's "__GI_" internal-alias prefix removed ("__GI___strdup",
// "__strdup", "__vasprintf_internal" are all found).
constexpr std::string_view kCopyingAllocators[] = {
    "strdup", "strndup", "wcsdup", "asprintf", "vasprintf", "asprintf_chk", "vasprintf_chk",
    "vasprintf_internal", "realpath", "canonicalize_file_name", "get_current_dir_name",
    "tempnam", "argz_create", "argz_add", "argz_append"};
// clang-format on

std::string_view WithoutLibcDecoration(std::string_view f) {
  if (StartsWith(f, "__GI_")) f.remove_prefix(5);
  while (!f.empty() && f[0] == '_') f.remove_prefix(1);
  return f;
}

// The first characters any table entry can start with: most names (the user's) are decided
// by one lookup, not by fifty comparisons.
struct FirstChars {
  bool allocator[256] = {};
  bool copying[256] = {};
  FirstChars() {
    auto at = [](bool* table, std::string_view e) -> bool& {
      return table[static_cast<unsigned char>(e[0])];
    };
    for (std::string_view e : kAllocatorFunctions) at(allocator, e) = true;
    for (std::string_view e : kAllocatorPrefixes) at(allocator, e) = true;
    for (std::string_view e : kCopyingAllocators) at(copying, e) = true;
  }
};

}  // namespace

FrameRole ClassifyFrame(std::string_view f, std::string_view module) {
  size_t slash = module.rfind('/');
  std::string_view base = slash == std::string_view::npos ? module : module.substr(slash + 1);
  for (std::string_view lib : kAllocatorLibraries) {
    if (StartsWith(base, lib)) return FrameRole::kAllocator;
  }
  static const FirstChars first;
  if (f.empty()) return FrameRole::kCaller;
  if (first.allocator[static_cast<unsigned char>(f[0])]) {
    for (std::string_view e : kAllocatorFunctions) {
      if (f == e) return FrameRole::kAllocator;
    }
    for (std::string_view p : kAllocatorPrefixes) {
      if (StartsWith(f, p)) return FrameRole::kAllocator;
    }
  }
  std::string_view plain = WithoutLibcDecoration(f);
  if (!plain.empty() && first.copying[static_cast<unsigned char>(plain[0])]) {
    for (std::string_view e : kCopyingAllocators) {
      if (plain == e) return FrameRole::kCopyingAllocator;
    }
  }
  return FrameRole::kCaller;
}

}  // namespace heapkit::pprof
