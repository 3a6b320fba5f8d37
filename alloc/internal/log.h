// Malloc-free diagnostics for code that runs inside the user's process.
//
// Everything here formats into a stack buffer and write(2)s it to stderr in one call, so it is
// safe inside the allocator, in signal handlers and while other threads are stopped. Messages
// are prefixed "heapkit: " unless they reproduce a gperftools line that scripts grep for
// (use LogRaw for those).
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapkit::internal {

// printf-like, supporting only: %s %d %i %u %ld %lu %lld %llu %zu %zd %x %lx %p %c %%, with
// flags '-' (left-justify) and '0' (zero-pad) and a decimal width (%12zu, %-20s, %08x).
// Lines longer than the internal buffer (4 KiB) are written in several chunks, never truncated.
void Log(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Same without the "heapkit: " prefix.
void LogRaw(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
// Logs "heapkit: <message>" and aborts. For corruption and invalid frees only.
[[noreturn]] void Fatal(const char* fmt, ...) __attribute__((format(printf, 1, 2)));

// Formats into buf (always NUL-terminated when size > 0); returns the length it needed.
size_t FormatTo(char* buf, size_t size, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

// Where Log, LogRaw and Fatal write: stderr unless a caller redirected them (the leak checker,
// while it writes a report to a file because stderr was closed). Returns the previous fd.
int SetLogFd(int fd);

// Writes all of [data, data+len) to fd, retrying on EINTR and short writes. False on error.
bool WriteAll(int fd, const void* data, size_t len);

// PERFTOOLS_VERBOSE (gperftools' name), default 0; parsed on first use.
int64_t VerboseLevel();
// True when PERFTOOLS_VERBOSE is set to a value > 0.
bool Verbose();

}  // namespace heapkit::internal
