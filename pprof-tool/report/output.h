// Where a report's bytes go — text reports and rendered pictures alike: a named file
// (--output), stdout, or a fresh temporary file (--web).
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Writes `bytes` to `path` or to stdout when `path` is "" (then flushed). A regular file is
// replaced atomically (written to `<path>.tmp.<pid>`, then renamed): on failure the previous
// file is untouched. Devices and FIFOs (/dev/stdout, pipes) are written in place.
// On failure returns false with one line naming the file and the cause in *error.
bool WriteOutput(const std::string& path, std::string_view bytes, std::string* error);

// Creates $TMPDIR (or /tmp)/pprof-tool-XXXXXX<suffix> with mode 0600 and writes `bytes` to it.
bool WriteTempFile(std::string_view suffix, std::string_view bytes, std::string* path,
                   std::string* error);

// Starts $BROWSER (or xdg-open when a display is available) on `path` without waiting for it.
// Returns false (and does nothing) when there is no browser to start.
bool OpenInBrowser(const std::string& path);

}  // namespace heapkit::pprof
