// Modules the program dlclose()d: their memory-map lines as they were just before, so that a
// later dump still names the code of a plugin that allocated memory and was then unloaded.
//
// The dlclose interposer (dlclose_interposer.cc, shared library only) calls
// NoteBeforeDlclose with the handle (the module's /proc/self/maps lines are copied while it
// is still mapped) and NoteAfterDlclose once the real dlclose returned (the entry is kept only
// if no loaded module has that path any more). Dumps append the kept lines after the live
// /proc/self/maps lines, behind one marker line that neither pprof reads as a mapping:
//
//   # heapkit: unloaded modules (dlclose), as they were mapped:
//   7f1c2a000000-7f1c2a001000 r-xp 00001000 08:01 1234   /opt/plugins/libplugin.so
//
// The lines keep the maps format, so gperftools' pprof, go pprof and pprof-tool symbolize them
// like any other mapping. An entry whose path is mapped again at dump time is left out (the
// module was dlopen()ed again). Storage is a fixed table (kMaxModules, kMaxLines bytes each):
// malloc-free, under one spin lock; modules beyond it are not remembered.
#pragma once

#include <cstddef>

#include "profiler/format/output_sink.h"

namespace heapkit::prof {

inline constexpr int kMaxUnloadedModules = 32;
inline constexpr size_t kMaxUnloadedModuleLines = 2048;

void NoteBeforeDlclose(void* handle);
// real_dlclose: the dlclose the interposer wraps. Whether a module is still loaded is asked with
// dlopen(path, RTLD_NOLOAD) (the reference it takes is dropped with real_dlclose), not with
// dl_iterate_phdr: glibc takes the loader's write lock for dl_iterate_phdr alone, outside the
// load lock that fork holds, and does not reset it in a child, so a fork while this thread
// walked the modules would leave any dl_iterate_phdr of the child (its own dlclose through this
// interposer, an exception's unwind) waiting forever.
void NoteAfterDlclose(int (*real_dlclose)(void* handle));

// fork: handlers of their own (registered once, at start-up, ProfilerStartup) hold the table's
// lock across fork, whether or not a profile is being collected: every dlclose takes it, so a
// child's dlclose must not find it held by a thread of the parent. Only syscalls run under it
// (and a dump's writes, after the profiler's lock), so the profiler's prepare handler, which
// runs first, takes its own locks before it.
void RegisterUnloadedModulesForkHandlers();

// Which remembered modules are mapped now, from the /proc/self/maps text fed in any pieces
// (a line is judged when its newline arrives).
class LiveModuleScan {
 public:
  void Feed(const char* data, size_t length);
  bool Live(int module) const { return live_[module]; }

 private:
  void Line();
  char line_[4352];
  size_t length_ = 0;
  bool overflow_ = false;
  bool live_[kMaxUnloadedModules] = {};
};

// Appends the marker and the remembered lines of modules `scan` did not see mapped. Nothing
// when there are none.
void AppendUnloadedModules(OutputSink* sink, const LiveModuleScan& scan);

// Calls `line` for each remembered line (without its newline) of the modules `scan` did not
// see mapped; for the leak checker's in-process symbolizer.
void ForEachUnloadedModuleLine(const LiveModuleScan& scan,
                               void (*line)(void* ctx, const char* text, size_t length), void* ctx);

}  // namespace heapkit::prof
