// --peak (peak_choice.h).
#include "pprof-tool/cli/peak_choice.h"

#include <sys/stat.h>

#include "pprof-tool/model/dump_series.h"

namespace heapkit::pprof {
namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsRegularFile(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// The peak file for one argument (see the header), in its format (ProtoFileSuffix).
std::string PeakFileFor(const std::string& given) {
  const std::string suffix = ProtoFileSuffix(given);
  const std::string file = given.substr(0, given.size() - suffix.size());
  std::string prefix;
  const int number = DumpFileNumber(file, &prefix);
  if (EndsWith(file, ".peak.heap") || (number >= 0 && EndsWith(prefix, ".peak"))) return given;
  if (number >= 0) {
    const std::string digits = file.substr(prefix.size() + 1, file.size() - prefix.size() - 6);
    return prefix + ".peak." + digits + ".heap" + suffix;
  }
  return file + ".peak.heap" + suffix;
}

}  // namespace

bool PeakProfileFiles(const std::vector<std::string>& files, std::vector<std::string>* peaks,
                      std::string* error) {
  peaks->clear();
  for (const std::string& f : files) {
    const std::string peak = PeakFileFor(f);
    if (!IsRegularFile(peak)) {
      *error = "--peak: no peak profile " + peak + " for " + f +
               " (the runtime writes it with HEAP_PROFILE_PEAK=1)";
      return false;
    }
    peaks->push_back(peak);
  }
  return true;
}

bool PeakDescription(const Profile& profile, std::string* line, std::string* error) {
  const std::string kPeak = "peak profile";
  if (profile.dump_reason.compare(0, kPeak.size(), kPeak) != 0) {
    *error = "--peak: " + profile.file + " is not a peak profile (no 'peak profile' reason line)";
    return false;
  }
  // "peak profile: 326 MB ..." or "peak profile of the interval from 12.000 s: 120 MB ..."
  *line = "Peak" + profile.dump_reason.substr(kPeak.size());
  return true;
}

}  // namespace heapkit::pprof
