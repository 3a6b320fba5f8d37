// The time views of heapkit dumps that carry lifetime and age lines (model/object_times.h):
// each replaces the profile's samples by the bytes it selects, per allocation stack, so every
// report (--text, --top, --svg, --flamegraph, ...) shows them.
//
//   --lifetime=<FILTER>  the allocations whose lifetime matches: `<D` (freed within D),
//                        `>D` (lived at least D: freed after D, or still live at the dump and
//                        older than D), `live` (still live at the dump), `freed`, `cross`
//                        (freed by another thread), `same` (freed by the allocating thread).
//                        D is a decade bound: 1us 10us 100us 1ms 10ms 100ms 1s 10s 100s 1000s
//                        1h. Values: the estimated bytes and objects (in the in-use and the
//                        allocation columns alike).
//   --since=N            growth after dump N up to this dump M: per stack, the bytes allocated
//                        after dump N and still live at M, minus the bytes that were live at N
//                        and have been freed by M (from dump N of the same series, found among
//                        the profiles given or as <prefix>.NNNN.heap beside this one; without
//                        it the second term is left out and a note says so). A bounded cache
//                        that replaces its objects then nets near zero, a leak its growth.
//                        Each stack also gets a hint: leak-like (nothing older freed, live
//                        bytes from every interval) or cache-like (replaces its objects).
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"

namespace heapkit::pprof {

struct LifetimeFilter {
  enum class Kind { kBelow, kAtLeast, kLive, kFreed, kCrossThread, kSameThread };
  Kind kind = Kind::kBelow;
  uint64_t bound_ns = 0;  // kBelow / kAtLeast
  std::string text;       // as given, for the description
};

// Parses the value of --lifetime; false with a one-line *error.
bool ParseLifetimeFilter(const std::string& text, LifetimeFilter* filter, std::string* error);

// Replaces profile->samples by the matching lifetime lines' bytes per allocation stack and
// appends the summary lines (totals, freed vs live, cross-thread, the decade histogram) to
// *notes. False (with *error) if the profile has no lifetime lines.
bool ApplyLifetimeView(const LifetimeFilter& filter, Profile* profile,
                       std::vector<std::string>* notes, std::string* error);

// A stack's age hint, for the reports' description (the caller names the stack).
struct AgeHint {
  std::vector<uint64_t> pcs;
  double growth = 0;
  std::string text;  // "leak-like: ..." / "cache-like: ..."
};

// --since=N on `profile` (dump M, which has age lines). `dump_n`: dump N of the same series,
// or nullptr. Replaces profile->samples by each stack's growth; *notes gets the summary, *hints
// the stacks with the largest growth (at most 10), largest first.
bool ApplySinceView(int since, const Profile* dump_n, Profile* profile,
                    std::vector<std::string>* notes, std::vector<AgeHint>* hints,
                    std::string* error);

}  // namespace heapkit::pprof
