#include "pprof-tool/report/thread_trampoline.h"

namespace heapkit::pprof {

bool IsUnnamedThreadTrampoline(std::string_view name, std::string_view caller) {
  // The symbolizer's placeholder for an address it cannot name: "<module>+0x<offset>".
  return caller == "start_thread" && name.substr(0, 9) == "libstdc++" &&
         name.find("+0x") != std::string_view::npos;
}

}  // namespace heapkit::pprof
