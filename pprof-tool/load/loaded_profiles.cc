#include "pprof-tool/load/loaded_profiles.h"

#include <set>

#include "pprof-tool/load/profile_choice.h"
#include "pprof-tool/load/profile_file.h"
#include "pprof-tool/load/symbolizer_choice.h"

namespace heapkit::pprof {
namespace {

// The program given, else the profile's own binary, else its first absolute executable mapping.
std::string ProgramName(const std::string& program, const Profile& profile) {
  if (!program.empty()) return program;
  if (!profile.binary.empty()) return profile.binary;
  for (const Mapping& m : profile.mappings) {
    if (!m.path.empty() && m.path[0] == '/' && m.perms.find('x') != std::string::npos)
      return m.path;
  }
  return "";
}

void MarkHeapCheck(LoadedProfiles* loaded) {
  loaded->profile.kind = ProfileKind::kHeapCheck;
  for (Profile& d : loaded->dumps) d.kind = ProfileKind::kHeapCheck;
}

}  // namespace

bool LoadProfiles(const LoadRequest& request, LoadedProfiles* loaded,
                  std::vector<std::string>* warnings, std::string* error) {
  LoadedProfiles& in = *loaded;
  if (!ReadProfiles(request.profiles, &in.dumps, warnings, error)) return false;
  in.series = ClassifyDumps(in.dumps);
  if (in.series.one_process && in.dumps.size() > 1) {
    std::set<std::vector<uint64_t>> stacks;
    for (const Profile& d : in.dumps)
      for (const RawSample& s : d.samples) stacks.insert(s.pcs);
    in.series_stacks.assign(stacks.begin(), stacks.end());
  }
  if (!ChooseProfile(in.dumps, in.series, request.dump, request.merge, &in.profile,
                     &in.dump_description, error)) {
    return false;
  }
  if (!request.base.empty()) {
    if (!ReadSummedProfiles(request.base, &in.base, warnings, error)) return false;
    in.has_base = true;
    SubtractBase(&in.base, request.diff_base, &in.profile);
  }
  if (request.heapcheck) MarkHeapCheck(loaded);
  if (request.sum_dumps) {
    in.sum = in.dumps[0];
    for (size_t i = 1; i < in.dumps.size(); ++i) in.sum.AddProfile(in.dumps[i], false);
    SubtractBase(in.Base(), request.diff_base, &in.sum);
    if (request.heapcheck) in.sum.kind = ProfileKind::kHeapCheck;
  }
  if (!request.keep_dumps) {
    in.dumps.clear();  // reports need the chosen profile only
    in.dumps.shrink_to_fit();
  }
  if (request.symbolize) {
    const Profile& symbolized = request.sum_dumps ? in.sum : in.profile;
    in.symbolizer =
        MakeProfileSymbolizer(symbolized, request.program, request.symbol_path, warnings);
  }
  in.program_name = ProgramName(request.program, in.profile);
  return true;
}

}  // namespace heapkit::pprof
