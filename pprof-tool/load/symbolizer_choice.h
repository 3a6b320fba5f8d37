// The load stage's choice of symbolizer (loaded_profiles.h), whatever the profile's format: a
// profile.proto's own Lines for the locations that carry them, libdwfl over the mappings for
// the others (created only when such a PC is met, so fully symbolized profiles never look for
// binaries); legacy and --raw profiles as MakeSymbolizer decides.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// Symbolizer for a profile: its embedded symbols if it has a "--- symbol" section, else
// libdwfl over its maps (with `program` substituted for the main executable; a program given
// without maps is placed at its link addresses, read from its ELF headers), binaries and
// debug files looked for in `symbol_path` first and checked against the build-ids the
// profile recorded.
std::unique_ptr<Symbolizer> MakeSymbolizer(const Profile& profile, const std::string& program,
                                           const std::vector<std::string>& symbol_path,
                                           std::vector<std::string>* warnings);

// `profile` must outlive the result; `warnings` too (the fallback may add some later).
std::unique_ptr<Symbolizer> MakeProfileSymbolizer(const Profile& profile,
                                                  const std::string& program,
                                                  const std::vector<std::string>& symbol_path,
                                                  std::vector<std::string>* warnings);

}  // namespace heapkit::pprof
