// Bounds on what pprof-tool lets elfutils' debuginfod client do (libdw loads it when
// DEBUGINFOD_URLS is set, to fetch missing debug info by build-id).
//
// Before any symbolization, when DEBUGINFOD_URLS is set:
//   - DEBUGINFOD_MAXSIZE and DEBUGINFOD_MAXTIME are set to kDebuginfodMaxSize bytes and
//     kDebuginfodMaxTime seconds when the user did not set them (the client's own defaults are
//     unlimited: a misbehaving server could keep a 1 GiB body in the cache, or stall each module
//     for minutes);
//   - the cache directory (DEBUGINFOD_CACHE_PATH, else $XDG_CACHE_HOME/debuginfod_client, else
//     ~/.cache/debuginfod_client) is created 0700 when missing and must then be a directory (not
//     a link) owned by the effective user and not writable by others; else downloads are turned
//     off (DEBUGINFOD_URLS unset) with one warning line: in a shared directory, another user's
//     planted link would make root's pprof-tool write where the link points.
#pragma once

#include <string>

namespace heapkit::pprof {

inline constexpr const char* kDebuginfodMaxSize = "536870912";  // 512 MiB
inline constexpr const char* kDebuginfodMaxTime = "60";         // seconds per download

// Applies the bounds to this process's environment. Returns "" or the warning to print.
std::string BoundDebuginfodDownloads();

}  // namespace heapkit::pprof
