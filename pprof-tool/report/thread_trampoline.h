// The function libstdc++'s std::thread starts every thread in, execute_native_thread_routine, is
// a local symbol: without libstdc++'s debug info (Debian's library has no .symtab and no
// .gnu_debugdata, and .dynsym does not list it) it shows as "libstdc++.so.6.0.30+0xd44a2" in
// every threaded stack. It is the one libstdc++ function glibc's start_thread calls, so an
// unnamed libstdc++ frame called by start_thread is named for what it is.
#pragma once

#include <string_view>

namespace heapkit::pprof {

inline constexpr std::string_view kThreadTrampolineName = "execute_native_thread_routine";

// `name`: a frame's name as the symbolizer gave it; `caller`: the next frame's.
bool IsUnnamedThreadTrampoline(std::string_view name, std::string_view caller);

}  // namespace heapkit::pprof
