#include "pprof-tool/proto/sample_index.h"

#include <vector>

namespace heapkit::pprof {
namespace {

bool TypeByName(const std::string& name, SampleType* type) {
  for (SampleType t : {SampleType::kInuseSpace, SampleType::kInuseObjects, SampleType::kAllocSpace,
                       SampleType::kAllocObjects, SampleType::kResidentSpace,
                       SampleType::kSwappedSpace, SampleType::kStrandedSpace}) {
    if (name == SampleTypeName(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

}  // namespace

bool ResolveSampleIndex(const Profile& profile, const std::string& index, SampleType* type,
                        std::string* error) {
  const std::vector<std::string> types =
      !profile.sample_types.empty() ? profile.sample_types
                                    : std::vector<std::string>{"alloc_objects", "alloc_space",
                                                               "inuse_objects", "inuse_space"};
  std::string list;
  for (const std::string& t : types) list += (list.empty() ? "" : ", ") + t;
  auto fail = [&](const std::string& what) {
    *error = profile.file + ": " + what + " (the profile has " + list + ")";
    return false;
  };
  std::string name = index;
  if (name.empty()) {
    // Nothing chosen on the command line: the file's own default (go pprof does the same).
    name = !profile.default_sample_type.empty() ? profile.default_sample_type
                                                : std::string(SampleTypeName(*type));
  } else if (index.find_first_not_of("0123456789") == std::string::npos) {
    size_t n = index.size() > 9 ? types.size() : size_t(std::stoul(index));
    if (n >= types.size()) return fail("no sample type number " + index);
    name = types[n];
  }
  bool present = false;
  for (const std::string& t : types) present = present || t == name;
  if (!present || !TypeByName(name, type)) return fail("no sample type '" + name + "'");
  return true;
}

}  // namespace heapkit::pprof
