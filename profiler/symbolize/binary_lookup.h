// Where the file for one mapped path is looked for, and where its separate debug info is.
//
// A profile read on another machine names binaries that may be gone or different there. The
// symbol path (pprof-tool's --symbol_path and PPROF_BINARY_PATH) lists directories searched
// before the recorded path, in this order for each directory:
//   1. by build-id, when the profile recorded one: <dir>/.build-id/xx/yyyy (the binary) and
//      <dir>/.build-id/xx/yyyy.debug (its debug file, which has the program headers and the
//      symbols too) — the layout of /usr/lib/debug and of debuginfod caches;
//   2. by base name: <dir>/<basename of the recorded path>.
// The recorded path comes last. The caller verifies each candidate (build-id, segments) and
// takes the first that fits.
#pragma once

#include <string>
#include <vector>

namespace heapkit::pprof {

std::vector<std::string> CandidateFiles(const std::string& recorded_path,
                                        const std::string& build_id_hex,
                                        const std::vector<std::string>& dirs);

// libdwfl's debuginfo_path for these directories: the file's own directory and its .debug/
// subdirectory (for .gnu_debuglink), then every symbol-path directory and /usr/lib/debug
// (each searched under .build-id/ by build-id, and for the debuglink name).
std::string DebuginfoPath(const std::vector<std::string>& dirs);

}  // namespace heapkit::pprof
