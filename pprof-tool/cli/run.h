// Executes a parsed command line: read -> symbolize -> pipeline -> report. Returns the exit
// status (0 ok, 2 for any user-caused failure, after one line on stderr).
#pragma once

#include "pprof-tool/cli/options.h"

namespace heapkit::pprof {

int RunPprofTool(const CliOptions& options);

// The whole tool: parse + run (main() calls this; tests may too).
int PprofToolMain(int argc, const char* const* argv);

}  // namespace heapkit::pprof
