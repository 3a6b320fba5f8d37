// The GNU build ID of an ELF file on disk, malloc-free (the runtime's profile.proto files name
// each mapping's build ID so that go pprof, Parca and debuginfod find its symbols).
#pragma once

#include <cstddef>

namespace heapkit::prof {

// Lowercase hex of `path`'s NT_GNU_BUILD_ID note into hex (NUL-terminated); false (hex = "")
// if the file cannot be read, is not a 64-bit ELF file or has no build ID.
bool ReadElfBuildIdHex(const char* path, char* hex, size_t hex_size);

}  // namespace heapkit::prof
