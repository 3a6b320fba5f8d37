// The GNU build-id of an ELF file, as lower-case hex (what go pprof writes in Mapping.build_id).
#pragma once

#include <string>

namespace heapkit::pprof {

// "" when the file cannot be opened, is not ELF or has no NT_GNU_BUILD_ID note.
std::string ReadBuildIdHex(const std::string& path);

}  // namespace heapkit::pprof
