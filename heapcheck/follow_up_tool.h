// The pprof-tool the report's follow-up command names: an absolute path to one that exists,
// so the printed command works from a build tree or an install whose bin/ is not on PATH.
#pragma once

#include <cstddef>

namespace heapkit::check {

// Looks, in this order, beside the object that holds the checker (libheapkit.so, or the
// executable linked with libheapkit.a) — `<dir>/pprof-tool/pprof-tool` (the build tree),
// `<dir>/../bin/pprof-tool` and `<dir>/../../bin/pprof-tool` (an install, lib/ or
// lib/<multiarch>/) — then on PATH. Writes the first regular executable file found, resolved
// to an absolute path, into buf and returns true; false (buf = "pprof-tool") if none is found.
bool FindPprofTool(char* buf, size_t size);

}  // namespace heapkit::check
