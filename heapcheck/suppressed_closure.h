// What a suppressed leak owns. A suppression names the allocation of a leaked object; the
// objects it alone points to (a leaked container's nodes, a string's buffer) are part of the
// same leak and are hidden with it, as LeakSanitizer does. An object that an unsuppressed leak
// reaches too stays reported.
//
//   hidden = reachable from a suppressed record
//            AND not reachable from any direct leak of an unsuppressed group
//            AND not itself in a suppressed group (those are counted as suppressed already)
//
// Two floods (heapcheck/flood.h) over the leaked objects only, with the suppressed / unsuppressed
// direct records as root objects. Runs after the world resumed (leaked memory is untouched by
// the program by definition); unreadable memory is skipped as in the check itself.
#pragma once

#include <cstddef>
#include <cstdint>

#include "heapcheck/flood.h"
#include "heapcheck/leak_check.h"

namespace heapkit::check {

// leaks: the check's records, sorted by address (as RunLeakCheck produces them).
// suppressed[i]: record i belongs to a suppressed group. hidden[i] receives the rule above.
// options: the check's pointer rule and unreadable ranges. False if out of memory.
bool FindLeaksOwnedBySuppressed(const LeakRecord* leaks, size_t n, const uint8_t* suppressed,
                                const FloodOptions& options, uint8_t* hidden);

}  // namespace heapkit::check
