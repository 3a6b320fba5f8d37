// Which source files --list and the web UI's source view read, and how much of them.
//
// A profile from another machine (a bug report's profile.proto, a --raw file) names its own
// source files, and a hostile one can name any file ("/etc/shadow"); pprof-tool often runs as
// root and the web UI shows what it reads. So a file name is read only where go pprof's
// -source_path / -trim_path would look, or where the debug info of a binary on this machine
// points:
//   1. --trim_path prefixes are cut off the name first (go pprof's -trim_path): a build path
//      such as /build/proj/src/x.cc becomes src/x.cc;
//   2. a relative name is looked up under each --source_path directory (default: the current
//      directory), like go pprof;
//   3. an absolute name that the loaded profiles themselves record (profile_named) is read only
//      when it lies under a --source_path directory (after resolving links and ".."); an
//      absolute name that only the debug info of a local binary gives is read as it is (that
//      binary is the user's, and so is its source tree).
// Only regular files are read (a FIFO, device or /proc link is refused), at most
// kMaxSourceFileBytes (a larger file is refused from its size, before reading it). A refused
// file is one short reason in the listing: "(source not available: <why>)".
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

namespace heapkit::pprof {

inline constexpr size_t kMaxSourceFileBytes = size_t{16} << 20;

struct SourceAccess {
  std::vector<std::string> source_path;  // --source_path dirs; empty: the current directory
  std::vector<std::string> trim_path;    // --trim_path prefixes
  std::set<std::string> profile_named;   // file names recorded in the loaded profiles
};

// Reads the source file `name` (as the symbolizer or the profile gave it) into lines; false with
// a short reason in *why.
bool ReadSourceFile(const SourceAccess& access, const std::string& name,
                    std::vector<std::string>* lines, std::string* why);

}  // namespace heapkit::pprof
