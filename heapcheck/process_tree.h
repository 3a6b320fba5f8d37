// The processes of a checked process tree that ended without a check, named in the others'
// reports.
//
// A process that leaves through _exit() without HEAP_CHECK_AT_UNDERSCORE_EXIT runs no check, and
// a line on its own stderr would change what a parent that parses it sees. It says so here
// instead: a shared anonymous page made when the checker starts (MAP_SHARED: every fork() child,
// grandchildren included, writes into that same page; exec() drops it, so a program started by
// exec has a page of its own), where it adds its pid. A whole-program check reads the
// page and names those processes in its report's last line: the ones that ended before that
// check (a parent's exit check runs after the children it waited for).
//
// Lock-free and malloc-free: a slot taken by an atomic add, a fixed number of pids kept (the
// count goes on). Not in a vfork() child (it shares its parent's memory, so its ending is
// nobody's business but its parent's): the caller decides that.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace heapkit::check {

struct UncheckedProcesses {
  static constexpr size_t kListed = 8;
  uint32_t count = 0;  // all of them; the first kListed pids below
  pid_t pids[kListed] = {};
};

// Start-up of a process that checks (not in its fork() children: they inherit the page). False,
// silently, if the page could not be mapped (nothing is then recorded).
bool CreateProcessTreeRecord();

// The calling process `pid` leaves through _exit/_Exit without HEAP_CHECK_AT_UNDERSCORE_EXIT.
void NoteLeftUncheckedByUnderscoreExit(pid_t pid);

// What the tree's processes noted so far.
UncheckedProcesses ReadUncheckedProcesses();

}  // namespace heapkit::check
