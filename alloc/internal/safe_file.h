// Files written into directories other users may share (/tmp, a dump directory), replaced
// atomically, without ever following a link or reusing a name we did not create.
//
// A file is written as a temporary beside its final name, then renamed over it:
//   1. CheckReplaceable: the final name is absent, or a regular file (never a symlink, FIFO or
//      device) owned by our effective uid. Another user's file or a planted link is refused.
//   2. CreateTempBeside: "<final>.tmp.XXXXXXXX" with 8 random characters, opened with
//      O_CREAT|O_EXCL|O_NOFOLLOW (a name that exists, as a file or a link, is never opened;
//      another name is drawn).
//   3. The caller writes and closes the file; CommitTemp renames it over the final name.
//      rename() replaces a directory entry and never writes through a link, so a link planted
//      between 1 and 3 is replaced, not followed.
// Malloc-free and async-signal-safe (the runtime's dumps use it); pprof-tool uses it too.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>

namespace heapkit::internal {

// 0 when `path` may be replaced; else an errno value: ELOOP (a symbolic link), EPERM (owned by
// another user), EINVAL (not a regular file), or lstat's error other than ENOENT. When the
// file exists and may be replaced, *existing (if given) receives its lstat; else st_mode = 0.
int CheckReplaceable(const char* path, struct stat* existing);

// Creates and opens for writing a new temporary file beside `final_path` with `mode` (less the
// umask). Returns the descriptor and writes the name to tmp (tmp_size bytes), or returns -1
// with *error = errno (ENAMETOOLONG when the name does not fit).
int CreateTempBeside(const char* final_path, mode_t mode, char* tmp, size_t tmp_size, int* error);

// Renames tmp over final_path; on failure removes tmp and returns the errno value, else 0.
int CommitTemp(const char* tmp, const char* final_path);

// Opens `path` for reading only if it is a regular file: O_NONBLOCK, so a FIFO never blocks
// the open, and fstat on the descriptor, so a link to a device or /proc/self/fd/N is judged by
// what it is, not by its name. Returns the descriptor (blocking again), or -1 with *error =
// errno, EINVAL for anything but a regular file.
int OpenRegularFile(const char* path, int* error);

// The explanation of a CheckReplaceable refusal (ELOOP, EPERM, EINVAL), else nullptr.
const char* ReplaceRefusal(int error);

}  // namespace heapkit::internal
