// HEAP_PROFILE_FORMAT (read by ReadProfileFormat, profiler_config.h): which files a profile is
// written as (the dumps, the peak profiles and the lifetime and age lines they carry):
//   legacy (default)  <name>           gperftools' text (legacy_writer.h), byte for byte as before
//   proto             <name>.pb.gz     gzipped profile.proto (proto_profile.h) instead
//   both              <name> and <name>.pb.gz, from the same rendering of the profile
// A bad value is one line and legacy; a privileged (AT_SECURE) process ignores the variable
// (alloc/internal/env.h). The timeline (timeline.h) stays legacy: its rows are comment lines
// for pprof-tool --timeline.
//
// Writing `proto` renders the legacy text into mmap'ed memory (MemorySink), converts it
// (LegacyTextToProto, malloc-free) and gzips it with zlib from the on-demand library, whose
// memory comes from an mmap arena (on_demand_library.h, `gzip`): no malloc, so a dump that runs
// inside an allocation's sampling callback stays legal. The file is created like the legacy
// one (WriteFileAtomically: a new temporary, O_EXCL|O_NOFOLLOW, 0600, renamed over the name; a
// planted link at the name is refused, never followed).
#pragma once

#include "profiler/format/legacy_writer.h"
#include "profiler/profiler_config.h"  // ProfileFormat, ReadProfileFormat

namespace heapkit::prof {

// Writes `profile` to `path` in the formats of `format`. Returns the legacy file's result
// (false with *error = errno, for the caller's line, as WriteLegacyProfileFile); a proto file
// that cannot be written is reported here, one line naming it ("failed to write heap profile
// <path>.pb.gz: <why>"), and does not make the call fail (with `proto` alone it returns true).
bool WriteProfileFiles(const char* path, const LegacyProfile& profile, ProfileFormat format,
                       int* error);

}  // namespace heapkit::prof
