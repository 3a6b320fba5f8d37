// What a report shows of the profiles on the command line (model/dump_series.h): one dump of a
// series of one process (the latest, or --dump=N), or the sum (profiles of different processes,
// or --merge); then --base/--diff_base subtracted. The header line saying which goes into the
// report's description.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

// The profile reports show (before --base), and its header line ("" for a single profile).
// dump: --dump=N (-1: not given); merge: --merge. False with *error if N names no dump.
bool ChooseProfile(const std::vector<Profile>& dumps, const DumpSeries& series, int dump,
                   bool merge, Profile* chosen, std::string* description, std::string* error);

}  // namespace heapkit::pprof
