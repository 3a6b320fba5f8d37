#include "pprof-tool/load/profile_choice.h"

namespace heapkit::pprof {

bool ChooseProfile(const std::vector<Profile>& dumps, const DumpSeries& series, int dump,
                   bool merge, Profile* chosen, std::string* description, std::string* error) {
  int index = -1;
  if (dump >= 0) {
    index = series.IndexOf(dump);
    if (index < 0) {
      *error = "--dump=" + std::to_string(dump) + ": no such dump (the profiles given are " +
               series.NumbersText() + ")";
      return false;
    }
  } else if (series.one_process && !merge) {
    index = int(series.latest);
  }
  if (index >= 0) {
    *chosen = dumps[size_t(index)];
  } else {
    *chosen = dumps[0];
    for (size_t i = 1; i < dumps.size(); ++i) chosen->AddProfile(dumps[i], false);
  }
  *description =
      dumps.size() > 1 || dump >= 0
          ? DumpDescription(dumps, series, index,
                            "another: --dump=N, the N of its file name; their sum: --merge")
          : "";
  return true;
}

}  // namespace heapkit::pprof
