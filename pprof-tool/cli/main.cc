// pprof-tool: see pprof-tool/README.md.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "pprof-tool/cli/debuginfod_bounds.h"
#include "pprof-tool/cli/run.h"

int main(int argc, char** argv) {
  // DEBUGINFOD_URLS is left as the user set it: libdw asks those servers for missing debug
  // info, and nothing goes to the network when it is unset (symbolize/README.md); downloads
  // are bounded in size and time, and a cache directory that is not the user's turns them off.
  const std::string debuginfod_warning = heapkit::pprof::BoundDebuginfodDownloads();
  if (!debuginfod_warning.empty()) fprintf(stderr, "pprof-tool: %s\n", debuginfod_warning.c_str());
  // A file size limit (ulimit -f) must give "cannot write ...: File too large", not a kill.
  signal(SIGXFSZ, SIG_IGN);
  try {
    return heapkit::pprof::PprofToolMain(argc, argv);
  } catch (const std::bad_alloc&) {
    // A profile too big for the memory (or `ulimit -v`): one line, not std::terminate.
    fflush(stdout);
    fprintf(stderr,
            "pprof-tool: out of memory (the profile is too large for the available "
            "memory)\n");
    return 2;
  }
}
