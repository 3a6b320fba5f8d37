// --peak: report the peak profile the runtime wrote beside a dump (HEAP_PROFILE_PEAK=1,
// profiler/output/peak_profile.h) instead of the dump itself, with the peak's time and total.
//   <prefix>.NNNN.heap       -> <prefix>.peak.NNNN.heap (the peak of the interval dump NNNN
//                               closed: since the previous dump)
//   <prefix>.peak[.NNNN].heap -> itself
//   <prefix>                 -> <prefix>.peak.heap (the peak since profiling started)
// A profile.proto dump (HEAP_PROFILE_FORMAT=proto|both) names its peak in the same format:
//   <prefix>.NNNN.heap.pb.gz -> <prefix>.peak.NNNN.heap.pb.gz
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

// The peak profiles for `files`; false with *error (one line) if one is missing.
bool PeakProfileFiles(const std::vector<std::string>& files, std::vector<std::string>* peaks,
                      std::string* error);

// "Peak: 326 MB in use at 0.930 s after profiling start (...)" (an interval's: "Peak of the
// interval from 12.000 s: ...") from the file's reason line;
// false with *error if `profile` is not a peak profile.
bool PeakDescription(const Profile& profile, std::string* line, std::string* error);

}  // namespace heapkit::pprof
