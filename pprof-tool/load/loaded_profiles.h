// The load stage: everything a report needs before the pipeline runs. The files are read
// whatever their format (profile_file.h), the profile reports show is chosen among them
// (profile_choice.h), --base / --diff_base is subtracted, and the symbolizer for it is chosen
// and built (symbolizer_choice.h). proto/ and parse/ are the codecs it uses; nothing after
// this stage opens a profile file or builds a symbolizer.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pprof-tool/model/dump_series.h"
#include "pprof-tool/model/profile.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

struct LoadRequest {
  std::vector<std::string> profiles;
  std::vector<std::string> base;  // --base or --diff_base files, summed and subtracted
  bool diff_base = false;         // they are --diff_base's (percentages of the base)
  int dump = -1;                  // --dump=N (-1: the latest of a series)
  bool merge = false;             // --merge: the sum of a series
  bool heapcheck = false;         // the profiles are leak-checker dumps
  bool keep_dumps = false;        // keep each profile on its own (the timeline, the web UI)
  // The web UI: every dump summed (--base subtracted) is what is symbolized, so that each
  // dump's files are found at one address.
  bool sum_dumps = false;
  bool symbolize = true;  // false: no symbolizer (--memory)
  std::string program;    // the <program> given ("": from the memory maps)
  std::vector<std::string> symbol_path;
};

struct LoadedProfiles {
  std::vector<Profile> dumps;    // each profile on its own (only when keep_dumps)
  DumpSeries series;             // what the dumps are (model/dump_series.h)
  Profile profile;               // what reports show: one dump or the sum, the base subtracted
  std::string dump_description;  // which dump, or the sum: a header line ("": one profile)
  Profile base;                  // the base files summed
  bool has_base = false;
  Profile sum;                             // sum_dumps: every dump summed, the base subtracted
  std::unique_ptr<Symbolizer> symbolizer;  // for `sum` (sum_dumps), else for `profile`
  std::string program_name;  // the <program>, else the profile's main binary ("": unknown)
  // Dumps of one process: every stack of every dump, once, from which the pipeline decides the
  // allocation wrappers (PipelineOptions::wrapper_stacks) so each dump's views fold alike.
  std::vector<std::vector<uint64_t>> series_stacks;

  const Profile* Base() const { return has_base ? &base : nullptr; }
};

// False with one line in *error when a file cannot be read or --dump names no dump. Warnings
// (of the formats, of the symbolizer) are appended; the symbolizer may add more later.
bool LoadProfiles(const LoadRequest& request, LoadedProfiles* loaded,
                  std::vector<std::string>* warnings, std::string* error);

}  // namespace heapkit::pprof
