// profile.proto (already gunzipped) -> Profile.
//
// What a reader may meet is hostile until checked, so decoding is three steps:
//   1. a scan of the top-level fields with protobuf's own CodedInputStream: malformed varints,
//      bad wire types and truncation fail here, and element counts are capped (kProtoLimits)
//      before anything is allocated for them;
//   2. parsing into the generated message (on an arena);
//   3. validation of every cross reference: string indexes in range, string_table[0] == "",
//      ids non-zero and unique, sample location ids and line function ids that exist, one
//      value per sample type.
// Every failure is one ParseError line "<file>: expected ..., found ...".
//
// The result: samples keep the file's values (already un-sampled by their writer) in the four
// heap columns chosen by sample type name; Locations that carry Lines become embedded symbols
// (names, files, lines; not symbolized again), the others keep their address and are
// symbolized from the mappings like a legacy profile.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "pprof-tool/model/profile.h"
#include "pprof-tool/parse/legacy_parser.h"

namespace heapkit::pprof {

struct ProtoLimits {
  size_t max_bytes = size_t{256} << 20;  // decompressed message size
  size_t max_strings = size_t{1} << 22;
  size_t max_samples = size_t{1} << 23;
  size_t max_locations = size_t{1} << 22;
  size_t max_functions = size_t{1} << 22;
  size_t max_mappings = size_t{1} << 16;
  // Inside samples and locations (nested_counts.h), counted before parsing.
  size_t max_frames_per_sample = size_t{1} << 16;  // location ids of one sample
  size_t max_values_per_sample = 64;
  size_t max_labels_per_sample = size_t{1} << 10;
  size_t max_lines_per_location = size_t{1} << 10;  // its inline chain
  size_t max_frames = size_t{1} << 25;              // location ids of all samples
  size_t max_labels = size_t{1} << 22;
  size_t max_lines = size_t{1} << 22;
  // Bytes the locations' Lines become in the profile (96 per Line plus its function's name and
  // file, which each Line copies): checked while converting; also at most 16 MiB + 16 x the
  // message's size.
  size_t max_line_name_bytes = size_t{256} << 20;
};

// True if `head` (the first bytes of a file, not gzip) starts like a serialized Profile: its
// leading fields have Profile's field numbers and wire types. Text never does.
bool LooksLikeProfileProto(std::string_view head);

bool DecodeProfileProto(std::string_view bytes, const std::string& file, Profile* profile,
                        ParseError* error, const ProtoLimits& limits = ProtoLimits());

}  // namespace heapkit::pprof
