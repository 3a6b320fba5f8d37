// go pprof's --sample_index=<name|number>, resolved against the sample types a profile has.
// Names: inuse_space, inuse_objects, alloc_space, alloc_objects. Numbers index the profile's
// sample types in file order (legacy files: alloc_objects, alloc_space, inuse_objects,
// inuse_space, as go pprof presents them). "" (nothing chosen on the command line) selects the
// profile's default_sample_type, else `*type` as given.
#pragma once

#include <string>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/report/pipeline.h"

namespace heapkit::pprof {

// False with one line "<file>: ..." in *error when the profile lacks the type.
bool ResolveSampleIndex(const Profile& profile, const std::string& index, SampleType* type,
                        std::string* error);

}  // namespace heapkit::pprof
