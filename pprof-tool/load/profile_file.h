// The load stage's reading (loaded_profiles.h): a profile file in any format pprof-tool knows,
// detected by content, never by name:
//   gzip magic      -> gunzip (bounded), then the same detection on the content;
//   protobuf fields -> profile.proto (proto/profile_reader.h);
//   anything else   -> the legacy text parser (parse/legacy_parser.h), streamed.
// Errors are the formats' own one-line ParseErrors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/proto/profile_reader.h"

namespace heapkit::pprof {

bool LoadProfileFile(const std::string& path, Profile* profile, ParseError* error,
                     const ProtoLimits& limits = ProtoLimits());

// Each file read on its own; their formats' warnings appended to *warnings. False with one line
// in *error for the first file that cannot be read.
bool ReadProfiles(const std::vector<std::string>& files, std::vector<Profile>* each,
                  std::vector<std::string>* warnings, std::string* error);

// The files read and summed (the --base files).
bool ReadSummedProfiles(const std::vector<std::string>& files, Profile* sum,
                        std::vector<std::string>* warnings, std::string* error);

// --symbols' input: maps lines (a profile of mappings only) and hex addresses, one a line.
struct SymbolsInput {
  Profile maps;
  std::vector<uint64_t> addresses;
};
SymbolsInput ReadSymbolsInput(const std::string& input);

}  // namespace heapkit::pprof
