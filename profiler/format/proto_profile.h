// A heapkit legacy heap profile (legacy_writer.h's text, with the `# heapkit:` comment lines)
// as profile.proto, malloc-free, for HEAP_PROFILE_FORMAT=proto|both (proto_profile_file.h).
// The layout follows Go's heap profiles where Go has the data, google tcmalloc's lifetime
// profiles for the rest:
//   - sample types alloc_objects/count, alloc_space/bytes, inuse_objects/count,
//     inuse_space/bytes (Go's, in Go's order); when the text has lifetime lines also
//     allocated_objects, allocated_space, deallocated_objects, deallocated_space,
//     censored_allocated_objects, censored_allocated_space (tcmalloc's names);
//   - one sample per record line, its values un-sampled as the pprofs un-sample heap_v2 lines
//     (alloc/sample_weight.h), with Go's numeric label `bytes` (the line's average size);
//     period_type space/bytes, period = the sampling period (1 in exact mode), so a reader
//     never un-samples again; default_sample_type inuse_space;
//   - one sample per lifetime line (object_times_dump.h) on its allocation stack: freed objects
//     in allocated_* and deallocated_*, objects live at the dump in allocated_* and
//     censored_allocated_* (estimated bytes, objects scaled alike), string labels `lifetime`
//     (the decade: "<1us", "1us-10us", ..., "1000s-1h", ">=1h") and `same_thread` ("true" or
//     "false"; freed objects only), and the numeric label `lifetime_ns` (the decade's lower
//     bound, unit nanoseconds); a freed line with the free's stack (HEAP_PROFILE_FREE_STACKS)
//     becomes two samples, as tcmalloc writes its lifetime profiles' stack pairs: allocated_*
//     on the allocation stack, deallocated_* on the free stack, the same labels and a numeric
//     `callstack-pair-id` (unit count) joining the two;
//   - every `# heapkit:` line (dump reason, time, memory figures, lifetimes, ages, peak time) as
//     a Profile.comment, verbatim, so pprof-tool reads the same views from either file;
//   - time_nanos from the dump time line, or for a peak profile the peak's own unix time;
//   - mappings of the executable, file-backed lines of MAPPED_LIBRARIES (unloaded modules
//     included) with their file names and build IDs (elf_build_id.h); locations carry
//     addresses only (symbolized by the reader, like a legacy file).
#pragma once

#include <cstddef>

#include "profiler/format/mapped_bytes.h"

namespace heapkit::prof {

// Appends the encoded (not gzipped) Profile to *out. false if the text is not a heap profile
// or memory ran out.
bool LegacyTextToProto(const char* text, size_t size, MappedBytes* out);

}  // namespace heapkit::prof
