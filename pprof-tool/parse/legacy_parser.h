// Parser for the legacy heap profile text formats (written by profiler/format/legacy_writer.h):
//   heap profile:  <n>: <b> [ <n>: <b>] @ heapprofile | heap_v2/<rate> | heap/<rate> | heap |
//                                         growth | growthz
//   <n>: <b> [ <n>: <b>] @ <pc> <pc> ...     (pcs hex, with or without 0x, any case)
//   MAPPED_LIBRARIES:   or   --- Memory map: ---
//   <maps lines>
// plus pprof-tool's own --raw output ("--- symbol" ... "---" "--- heap" <profile>).
//
// Tolerant where it costs nothing (comments '#', blank lines, CRLF, missing alloc columns,
// uppercase hex, missing 0x, maps lines without offsets are skipped), strict where silence
// would mislead (a malformed sample line, numbers out of range, binary data): then it fails
// with the file, the 1-based line number and what was expected. Linear time, no recursion:
// safe on any input (fuzzed by tests/pprof_tool/fuzz). A last line without its '\n' (a
// truncated file) is never trusted: a sample or maps line is dropped with a warning in
// Profile::warnings, anything else fails "... (the file ends in the middle of this line:
// truncated?)". Lines longer than 1 MiB are rejected; files are read in chunks, so memory
// holds the parsed profile, never the whole file.
#pragma once

#include <string>
#include <string_view>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

struct ParseError {
  std::string file;
  int line = 0;          // 0: not about a line (unreadable file)
  std::string expected;  // "expected ..." text

  // "<file>:<line>: <expected>" (or "<file>: <expected>" when line == 0)
  std::string Message() const;
};

// Parses `text` read from `file_name`. On failure returns false and fills *error.
bool ParseProfileText(std::string_view text, const std::string& file_name, Profile* profile,
                      ParseError* error);

// Reads and parses a file. Unreadable paths, directories, FIFOs and devices are errors
// (line 0); opening never blocks.
bool ReadProfileFile(const std::string& path, Profile* profile, ParseError* error);

// Parses one /proc/<pid>/maps line (profiler/symbolize/maps_line.h) into a Mapping. Returns false
// if it is not one.
bool ParseMapsLine(std::string_view line, Mapping* mapping);

// One "# heapkit: ..." comment line of a dump (reason, time, memory figures, residency,
// lifetimes, ages) into `profile`; other lines are ignored. The proto reader gives it the
// Profile.comment strings of the runtime's profile.proto files, which carry the same lines.
void ParseHeapkitComment(std::string_view line, Profile* profile);

}  // namespace heapkit::pprof
