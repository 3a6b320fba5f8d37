// The mappings of a profile.proto as the symbolizer wants them: cut into ELF segments.
//
// profile.proto keeps no permissions, and writers merge neighbouring mappings of one file
// (go pprof's legacy reader makes one mapping of a non-PIE's r-- and r-x pages). The
// symbolizer finds code by its executable mappings and checks them against the ELF segments,
// so each mapping is cut back into its file's PT_LOAD segments, with 'x' where the segment is
// executable. A file that cannot be read keeps the mapping whole, as code.
#pragma once

#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

// Each mapping's segments (perms "r-xp" or "r--p"), in order, with its path and build-id;
// mappings with an empty range are left out.
std::vector<Mapping> SegmentsOfProtoMappings(const std::vector<Mapping>& mappings);

}  // namespace heapkit::pprof
