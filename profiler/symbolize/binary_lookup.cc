#include "profiler/symbolize/binary_lookup.h"

namespace heapkit::pprof {
namespace {

bool IsHex(const std::string& s) {
  return s.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

}  // namespace

std::vector<std::string> CandidateFiles(const std::string& recorded_path,
                                        const std::string& build_id_hex,
                                        const std::vector<std::string>& dirs) {
  std::vector<std::string> out;
  const size_t slash = recorded_path.rfind('/');
  const std::string base =
      slash == std::string::npos ? recorded_path : recorded_path.substr(slash + 1);
  for (const std::string& dir : dirs) {
    if (dir.empty()) continue;
    if (build_id_hex.size() > 2 && IsHex(build_id_hex)) {  // a profile's id never makes a path
      const std::string stem =
          dir + "/.build-id/" + build_id_hex.substr(0, 2) + "/" + build_id_hex.substr(2);
      out.push_back(stem);
      out.push_back(stem + ".debug");
    }
    if (!base.empty()) out.push_back(dir + "/" + base);
  }
  out.push_back(recorded_path);
  return out;
}

std::string DebuginfoPath(const std::vector<std::string>& dirs) {
  std::string path = ":.debug";
  for (const std::string& dir : dirs) {
    // libdwfl splits at ':' and skips relative entries for build-id lookups.
    if (!dir.empty() && dir[0] == '/' && dir.find(':') == std::string::npos) path += ":" + dir;
  }
  return path + ":/usr/lib/debug";
}

}  // namespace heapkit::pprof
