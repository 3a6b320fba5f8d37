// The leak checker's exit with its error status after the exit check found leaks.
//
// exit() flushes stdio without taking the streams' locks (glibc's _IO_cleanup); the exit check
// runs inside exit() and must leave with another status, so it flushes itself (fflush(nullptr),
// which takes every stream's lock) and calls _exit. A thread of the program may hold a stream's
// lock for ever — blocked in fgets() on stdin, or writing into a pipe nobody reads — and the
// flush would then wait for it: the process would hang instead of exiting. So the flush is
// bounded: a one-shot timer aimed at this thread (SIGALRM, the handler installed here; the
// process is ending, so the program's own handler no longer matters) ends the process with the
// same status after kExitFlushDeadlineMs, what could be flushed flushed.
#pragma once

namespace heapkit::check {

inline constexpr int kExitFlushDeadlineMs = 3000;

[[noreturn]] void FlushStdioAndExit(int status);

}  // namespace heapkit::check
