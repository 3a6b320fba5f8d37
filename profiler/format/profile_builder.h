// The one profile.proto builder of the runtime, fed by samples (a stack, its values, its
// labels) rather than by text, like google tcmalloc's ProfileBuilder: the profile files
// (proto_profile_file.h) and the HTTP endpoint's profiles (heap_profile_proto.h) are both
// written here, so they agree on every field they share.
//
// Malloc-free: every table lives in mmap'ed memory (MappedBytes), so a dump may build a
// profile inside an allocation's sampling callback. Out of memory is sticky and reported by
// Finish.
//
// What it owns, once: the string table (string_table[0] is ""), the location IDs (one per
// distinct PC, numbered from 1, each naming the mapping that holds it), the function IDs, the
// mappings (numbered from 1), the comments and the top-level figures. A location's address is
// the call instruction (return address - 1), as Go writes them. With a LocationNamer, each
// location carries its frames (innermost inline frame first, the physical function last) and
// each mapping says whether all of its locations were named (has_functions, has_filenames,
// has_line_numbers, has_inline_frames: all four true or all four false, so that go pprof names
// the rest by build ID); without one, locations carry addresses only and mappings say so.
//
// The output's field order is fixed: sample types, samples, mappings, locations, functions,
// strings, comments, time, duration, period type, period, default sample type. String indices
// are handed out in call order (mappings, labels, frames and comments as they are added, the
// sample-type names at Finish), so the same calls give the same bytes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "profiler/format/location_namer.h"
#include "profiler/format/mapped_bytes.h"
#include "profiler/format/proto_strings.h"
#include "profiler/base/proto_wire.h"

namespace heapkit::prof {

// A sample type (profile.proto's ValueType): "inuse_space", "bytes".
struct ProfileValueType {
  const char* type;
  const char* unit;
};

// One label: a string label when `str` is not null, else numeric (`num`, optional `unit`).
struct ProfileLabel {
  const char* key;
  const char* str;
  int64_t num;
  const char* unit;
};

class ProfileBuilder {
 public:
  static constexpr int kMaxValues = 16;
  static constexpr int kMaxFrames = 256;       // per stack; deeper stacks are cut
  static constexpr int kMaxInlineFrames = 64;  // per location

  // `types` (static storage) are the samples' values, in order; at most kMaxValues.
  ProfileBuilder(const ProfileValueType* types, int type_count);
  ProfileBuilder(const ProfileBuilder&) = delete;
  ProfileBuilder& operator=(const ProfileBuilder&) = delete;

  void SetNamer(LocationNamer namer) { namer_ = namer; }
  // Executable file mappings, before the samples whose PCs they hold.
  void AddMapping(uint64_t start, uint64_t limit, uint64_t offset, const char* path,
                  const char* build_id);
  // `values` has one entry per sample type, zeros included; `pcs` are return addresses.
  void AddSample(const uint64_t* pcs, int depth, const int64_t* values, const ProfileLabel* labels,
                 int label_count);
  void AddComment(const char* text, size_t size);
  void SetTimeNanos(int64_t t) { time_nanos_ = t; }
  void SetDurationNanos(int64_t d) { duration_nanos_ = d; }
  void SetPeriod(const char* type, const char* unit, int64_t period);
  void SetDefaultSampleType(const char* type) { default_type_ = type; }

  // Appends the encoded (not gzipped) Profile to *out; false if memory ran out anywhere.
  bool Finish(MappedBytes* out);

 private:
  using Encoder = ProtoWire<MappedBytes>;
  struct Mapping {
    uint64_t start, limit, offset;
    int64_t path, build_id;  // string indices
    bool unnamed;            // a location in it that the namer could not name
  };

  uint64_t LocationId(uint64_t pc);
  void NameLocation(uint64_t address, int mapping, Encoder* location);
  uint64_t FunctionId(const ProfileFrame& f);
  void ValueType(Encoder* out, int field, const char* type, const char* unit);

  const ProfileValueType* types_;
  const int type_count_;
  LocationNamer namer_{nullptr, nullptr};
  int64_t time_nanos_ = 0, duration_nanos_ = 0, period_ = 0;
  const char* period_type_ = nullptr;
  const char* period_unit_ = nullptr;
  const char* default_type_ = nullptr;
  ProtoStrings strings_;
  Encoder samples_, locations_, functions_, comments_, scratch_;
  MappedBytes mappings_;      // Mapping per mapping id - 1
  MappedBytes location_ids_;  // open addressing: {pc, id} pairs
  size_t location_slots_ = 0, location_count_ = 0;
  MappedBytes function_ids_;  // open addressing: {name, system, file, start line, id}
  size_t function_slots_ = 0, function_count_ = 0;
  bool failed_ = false;
};

}  // namespace heapkit::prof
