#include "pprof-tool/model/stack_residency.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "pprof-tool/model/comment_fields.h"
#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {
namespace {

bool ParseDecimal(std::string_view* s, double* out) {
  uint64_t v = 0;
  if (!ReadDecimal(s, &v)) return false;
  *out = static_cast<double>(v);
  return true;
}

}  // namespace

bool ParseStackResidencyLine(std::string_view line, Profile* profile) {
  constexpr std::string_view kPrefix = "# heapkit: residency ";
  if (line.substr(0, kPrefix.size()) != kPrefix) return false;
  line.remove_prefix(kPrefix.size());
  Profile::StackResidency r;
  if (!ParseDecimal(&line, &r.resident)) return false;
  SkipSpaces(&line);
  if (!ParseDecimal(&line, &r.swapped)) return false;
  SkipSpaces(&line);
  if (!ParseDecimal(&line, &r.stranded)) return false;
  SkipSpaces(&line);
  if (line.substr(0, 1) != "@") return false;
  line.remove_prefix(1);
  if (!ReadPcList(&line, &r.pcs) || !line.empty()) return false;
  profile->stack_residency.push_back(std::move(r));
  return true;
}

void ApplyStackResidency(Profile* profile) {
  if (profile->stack_residency.empty()) return;
  std::map<std::vector<uint64_t>, std::vector<RawSample*>> by_stack;
  for (RawSample& s : profile->samples) by_stack[s.pcs].push_back(&s);
  for (const Profile::StackResidency& r : profile->stack_residency) {
    auto it = by_stack.find(r.pcs);
    if (it == by_stack.end()) continue;  // the stack's objects were freed between the passes
    double raw_inuse = 0;
    for (const RawSample* s : it->second) raw_inuse += s->raw.inuse_bytes;
    if (raw_inuse <= 0) continue;
    for (RawSample* s : it->second) {
      const double share = s->raw.inuse_bytes / raw_inuse;
      const double resident = std::min(r.resident * share, s->raw.inuse_bytes);
      const double swapped = std::min(r.swapped * share, s->raw.inuse_bytes - resident);
      const double scale = s->raw.inuse_bytes > 0 ? s->value.inuse_bytes / s->raw.inuse_bytes : 0;
      s->raw.resident_bytes += resident;
      s->raw.swapped_bytes += swapped;
      s->raw.stranded_bytes += r.stranded * share;
      s->value.resident_bytes += resident * scale;
      s->value.swapped_bytes += swapped * scale;
      s->value.stranded_bytes += r.stranded * share * scale;
    }
  }
  profile->stack_residency.clear();
  profile->stack_residency.shrink_to_fit();
  if (profile->sample_types.empty()) {
    profile->sample_types = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
  }
  for (const char* t : {"resident_space", "swapped_space", "stranded_space"}) {
    if (std::find(profile->sample_types.begin(), profile->sample_types.end(), t) ==
        profile->sample_types.end()) {
      profile->sample_types.push_back(t);
    }
  }
}

bool HasStackResidency(const Profile& profile) {
  return std::find(profile.sample_types.begin(), profile.sample_types.end(), "resident_space") !=
         profile.sample_types.end();
}

}  // namespace heapkit::pprof
