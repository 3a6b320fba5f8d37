// What /proc/self/task/<tid>/status says about one thread, read without malloc (no stdio): its
// blocked signal mask, its tracer and whether it exited. The thread stopper reads each thread's
// status as it lists it, before it signals it, so a thread that blocks the suspend signal is
// known at once (and stopped another way) instead of being waited for. (SigIgn does not
// matter: the stopper installs its handler, for the whole process, before it signals.)
#pragma once

#include <sys/types.h>

#include <cstdint>

namespace heapkit::check {

struct TaskStatus {
  uint64_t blocked = 0;  // SigBlk: bit n-1 set = signal n blocked
  pid_t tracer = 0;      // TracerPid: 0 when no process traces the thread
  bool exited = false;   // State Z or X: a zombie (a main thread that called pthread_exit)
};

// False when the file cannot be read (the thread exited) or lacks the fields.
bool ReadTaskStatus(pid_t tid, TaskStatus* out);

// Parses the text of a status file (exposed for unit tests).
bool ParseTaskStatus(const char* text, TaskStatus* out);

inline bool MaskHas(uint64_t mask, int sig) {
  return sig >= 1 && sig <= 64 && (mask >> (sig - 1) & 1) != 0;
}

}  // namespace heapkit::check
