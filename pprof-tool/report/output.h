// Where a report's bytes go — text reports and rendered pictures alike: a named file
// (--output), stdout, or a fresh temporary file (--web).
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Writes `bytes` to `path` or to stdout when `path` is "" (then flushed). A new or regular file
// is replaced atomically and safely (alloc/internal/safe_file.h: a fresh O_EXCL|O_NOFOLLOW
// temporary beside it, renamed over it): on failure the previous file is untouched, a replaced
// file keeps its mode, and another user's file is refused. Character devices, FIFOs and sockets
// (pipes) are written in place, and so is whatever a link owned by us or by root points to
// (/dev/stdout); a link owned by anyone else is refused.
// On failure returns false with one line naming the file and the cause in *error.
bool WriteOutput(const std::string& path, std::string_view bytes, std::string* error);

// Creates $TMPDIR (or /tmp)/pprof-tool-XXXXXX<suffix> with mode 0600 and writes `bytes` to it.
bool WriteTempFile(std::string_view suffix, std::string_view bytes, std::string* path,
                   std::string* error);

// Starts $BROWSER (or xdg-open when a display is available) on `path` without waiting for it.
// Returns false (and does nothing) when there is no browser to start.
bool OpenInBrowser(const std::string& path);

}  // namespace heapkit::pprof
