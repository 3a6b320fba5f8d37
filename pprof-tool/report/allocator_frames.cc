#include "pprof-tool/report/allocator_frames.h"

namespace heapkit::pprof {
namespace {

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

bool IsAllocatorFrame(std::string_view f, std::string_view module) {
  // Everything inside the allocator libraries themselves.
  size_t slash = module.rfind('/');
  std::string_view base = slash == std::string_view::npos ? module : module.substr(slash + 1);
  if (StartsWith(base, "libtcmalloc") || StartsWith(base, "libheapkit") ||
      StartsWith(base, "libjemalloc")) {
    return true;
  }
  static constexpr std::string_view kExact[] = {
      "malloc", "calloc", "realloc", "free", "cfree", "memalign", "posix_memalign",
      "aligned_alloc", "valloc", "pvalloc", "reallocarray", "__libc_malloc", "__libc_calloc",
      "__libc_realloc", "__libc_memalign", "__posix_memalign", "do_malloc", "do_memalign",
      "DoSampledAllocation", "cpp_alloc", "__builtin_new", "__builtin_vec_new",
      "__builtin_delete", "__builtin_vec_delete"};
  for (std::string_view e : kExact) {
    if (f == e) return true;
  }
  if (StartsWith(f, "operator new") || StartsWith(f, "operator delete")) return true;
  if (StartsWith(f, "tc_") || StartsWith(f, "tcmalloc::") || StartsWith(f, "heapkit_")) return true;
  if (StartsWith(f, "heapkit::alloc::") || StartsWith(f, "heapkit::prof::")) return true;
  if (StartsWith(f, "(anonymous namespace)::do_malloc") || StartsWith(f, "(anonymous namespace)::do_memalign")) return true;
  if (StartsWith(f, "(anonymous namespace)::cpp_") || StartsWith(f, "(anonymous namespace)::tc_")) return true;
  return false;
}

}  // namespace heapkit::pprof
