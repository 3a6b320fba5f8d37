// pprof-tool: see pprof-tool/README.md.
#include <cstdlib>

#include "pprof-tool/cli/run.h"

int main(int argc, char** argv) {
  // Never reach out to debuginfod servers: symbolization is local and offline.
  unsetenv("DEBUGINFOD_URLS");
  return heapkit::pprof::PprofToolMain(argc, argv);
}
