// Residency per stack: heapkit dumps written with HEAP_PROFILE_RESIDENCY=1 carry, for each
// stack with live sampled objects, the bytes of those objects found on resident and on swapped
// pages at the dump (profiler/output/stack_residency.h):
//
//   # heapkit: residency <resident bytes> <swapped bytes> <stranded bytes> @ 0x<pc> ...
//
// in raw (sampled) bytes, like the record lines' in-use bytes. They become the sample values
// resident_space and swapped_space (tcmalloc's names), un-sampled with the same factor as the
// stack's in-use bytes, so resident_space <= inuse_space for every stack, and stranded_space:
// the free bytes of their spans that the stack's live objects keep from going back to the page
// heap (each object charged its share of its span's free objects).
#pragma once

#include <string_view>

namespace heapkit::pprof {

struct Profile;

// Keeps the line in profile->stack_residency when it is a residency line; returns whether it
// was one.
bool ParseStackResidencyLine(std::string_view line, Profile* profile);

// After all samples are read: spreads each stack's residency over the samples with that stack
// (in proportion to their raw in-use bytes) and lists resident_space and swapped_space among
// the profile's sample types. No-op for profiles without residency lines.
void ApplyStackResidency(Profile* profile);

bool HasStackResidency(const Profile& profile);

}  // namespace heapkit::pprof
