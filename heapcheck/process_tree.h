// The processes of a checked process tree that ended without a check, named in the others'
// reports; and which process the memory belongs to (a vfork child runs in its parent's).
//
// A process that leaves through _exit() without HEAP_CHECK_AT_UNDERSCORE_EXIT, or a forked
// child that a HEAP_CHECK_AT_SIGNAL signal kills (its parent's watcher thread is not in it),
// runs no check, and a line on its own stderr would change what a parent that parses it sees. It
// says so here instead: a shared anonymous page made when the checker starts (MAP_SHARED: every
// fork() child, grandchildren included, writes into that same page; exec() drops it, so a
// program started by exec has a page of its own), where it adds its pid and how it ended. A
// whole-program check reads the page and names those processes in its report's last line: the
// ones that ended before that check (a parent's exit check runs after the children it waited
// for). What runs none of our code (SIGKILL, a crash) is never named.
//
// Lock-free, malloc-free and async-signal-safe: a slot taken by an atomic add, a fixed number
// of entries kept (the count goes on).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace heapkit::check {

struct UncheckedProcesses {
  static constexpr size_t kListed = 8;
  uint32_t count = 0;  // all of them; the first kListed below
  pid_t pids[kListed] = {};
  int signals[kListed] = {};  // 0: left through _exit; else the signal it died by
};

// Start-up of a process that checks: notes its pid as its memory's owner, registers fork()'s
// child handler (a child owns its copy) and makes the tree's page (its children inherit it). Not
// mapped (mmap refused): nothing is recorded, silently.
void StartProcessTree();

// Whether the calling task runs in memory of its own: false in a vfork() or posix_spawn child,
// or any task that got the memory without fork()'s handlers (a raw clone), before
// StartProcessTree too.
bool InOwnMemory();

// The calling process `pid` ends unchecked: through _exit (signal 0) or killed by `signal`.
void NoteEndedUnchecked(pid_t pid, int signal);

// What the tree's processes noted so far.
UncheckedProcesses ReadUncheckedProcesses();

}  // namespace heapkit::check
