// Reads a profile file in any format pprof-tool knows, detected by content, never by name:
//   gzip magic      -> gunzip (bounded), then the same detection on the content;
//   protobuf fields -> profile.proto (proto/profile_reader.h);
//   anything else   -> the legacy text parser (parse/legacy_parser.h), streamed.
// Errors are the formats' own one-line ParseErrors.
#pragma once

#include <string>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/parse/legacy_parser.h"
#include "pprof-tool/proto/profile_reader.h"

namespace heapkit::pprof {

bool LoadProfileFile(const std::string& path, Profile* profile, ParseError* error,
                     const ProtoLimits& limits = ProtoLimits());

}  // namespace heapkit::pprof
