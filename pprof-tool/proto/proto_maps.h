// Maps text (/proc/<pid>/maps lines) for the mappings of a profile.proto, for the symbolizer.
//
// profile.proto keeps no permissions, and writers merge neighbouring mappings of one file
// (go pprof's legacy reader makes one mapping of a non-PIE's r-- and r-x pages). The
// symbolizer finds code by its executable mappings and checks them against the ELF segments,
// so each mapping is cut back into its file's PT_LOAD segments, with 'x' where the segment is
// executable. A file that cannot be read keeps the mapping whole, as code.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

std::string MapsTextForProtoMappings(const std::vector<Mapping>& mappings);

}  // namespace heapkit::pprof
