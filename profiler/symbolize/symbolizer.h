// The public header of the symbolizer library (target heapkit_symbolizer; see README.md):
// turning PCs into function, file, line and inline chain with elfutils libdwfl. The one home
// for it, linked by pprof-tool and by the leak checker's end-of-run report in libheapkit.
//
// It uses the normal heap and C++ exceptions: the leak checker calls it only after the world is
// restarted, with recording off.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "profiler/symbolize/maps_line.h"

namespace heapkit::pprof {

// How separate debug info missing locally is asked of debuginfod servers, when the
// environment's DEBUGINFOD_URLS is non-empty (local_debuginfo.h says why it matters):
//   kInProcess      elfutils' client, loaded into this process (pprof-tool: its own process);
//   kHelperProcess  `debuginfod-find` in a child process: nothing is loaded into this one (the
//                   leak checker's report, which runs inside the checked program);
//   kNever          never.
enum class DebuginfodClient { kInProcess, kHelperProcess, kNever };

// One source-level frame. An address inside inlined code yields several frames, innermost
// (the inlined callee) first, the physical function last.
struct SourceFrame {
  std::string function;  // demangled, "@GLIBC_..." stripped; "module+0xoffset" if unknown
  std::string file;      // "" if unknown
  int line = 0;          // 0 if unknown
  bool inlined = false;  // true for every frame but the last of an address
  std::string module;    // path of the mapped object, "" if not mapped
  // The symbol's raw (mangled) name, for FullFunctionName; nullptr if unknown. Points into
  // the Symbolizer's data: valid as long as the Symbolizer that returned the frame.
  const char* linkage_name = nullptr;
  // Declaration line of `function` (DW_AT_decl_line of the subprogram, or of the abstract
  // origin of an inlined instance): where its definition starts, in its own file. 0 if unknown.
  int start_line = 0;
  // true when nothing named the address: `function` is the "module+0xoffset" or "0x<pc>"
  // placeholder, the only frame of its address.
  bool placeholder = false;
};

// Where binaries and separate debug info are looked for (binary_lookup.h has the order).
struct SymbolSearch {
  // Searched before the paths in the maps: by build-id (.build-id/xx/yyyy[.debug]), then by
  // base name; and for debug files, before /usr/lib/debug.
  std::vector<std::string> dirs;
  // The build-id (lower-case hex) recorded for a path of the maps, when the profile has one
  // (profile.proto's Mapping.build_id). A file whose build-id differs is refused.
  std::unordered_map<std::string, std::string> build_ids;
  // true: the standard search (build-id directories, .gnu_debuglink) and, when the process's
  // environment has a non-empty DEBUGINFOD_URLS, debuginfod as `debuginfod` says (cache under
  // DEBUGINFOD_CACHE_PATH); with it unset no debuginfod code is loaded or run.
  // false: build-id directories only; never the network, whatever the environment says (a
  // privileged process must not let its caller's environment choose what it fetches).
  bool standard_search = true;
  DebuginfodClient debuginfod = DebuginfodClient::kInProcess;
};

// Every line of `maps_text` that is a maps line (maps_line.h), in order; the views point into
// maps_text. For callers that hold the text of a live /proc/<pid>/maps.
std::vector<MapsLine> ParseMapsText(std::string_view maps_text);

class Symbolizer {
 public:
  virtual ~Symbolizer() = default;

  // `mappings`: the process's memory map, one entry per /proc/<pid>/maps line (maps_line.h
  // parses one; callers holding a profile's mappings fill the fields themselves). Only
  // file-backed mappings name modules; the paths are copied, so the views may die after the
  // call. Missing binaries are not an error: they produce one warning each (appended to
  // *warnings, one line per warning) and "module+0xoffset" names. A file found for a path is
  // reported under the path of the mapping (SourceFrame::module).
  static std::unique_ptr<Symbolizer> ForMappings(std::span<const MapsLine> mappings,
                                                 const SymbolSearch& search,
                                                 std::vector<std::string>* warnings);

  // `pc` is looked up as given: callers subtract 1 from return addresses to land inside the
  // call instruction (in heap profiles every PC is one, the leaf included). Results are cached per
  // PC. Never empty: an unknown address yields one frame named "0x<pc>" or "module+0xoffset".
  virtual const std::vector<SourceFrame>& Symbolize(uint64_t pc) = 0;

  // Symbolize's answer for `pc` in *frames, without adding it to the per-PC cache (an answer
  // already cached is copied): for addresses a client chose, which must not grow this object.
  // Implementations without a cache of their own worth bounding keep the default.
  virtual void SymbolizeWithoutCaching(uint64_t pc, std::vector<SourceFrame>* frames) {
    *frames = Symbolize(pc);
  }
};

}  // namespace heapkit::pprof
