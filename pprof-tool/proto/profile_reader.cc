#include "pprof-tool/proto/profile_reader.h"

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>

#include "pprof-tool/proto/nested_counts.h"
#include "pprof-tool/proto/utf8.h"
#include "profile.pb.h"

namespace heapkit::pprof {
namespace {

namespace pb = perftools::profiles;
using google::protobuf::io::CodedInputStream;

constexpr int kLen = 2, kVarint = 0;

// What Lines cost once converted is bounded by the input too: a Line is a few bytes of input and
// becomes a frame with copies of its function's name and file (kLineCost plus those bytes), so
// without this a location repeating a long name would multiply the input.
constexpr size_t kLineNameBase = size_t{16} << 20;
constexpr size_t kLineNamesPerByte = 16;
constexpr size_t kLineCost = 96;  // two std::strings, two ints, the vectors' slack

// Wire type Profile declares for a top-level field, -1 if it has no such field.
int ExpectedWireType(uint32_t field) {
  switch (field) {
    case 1:
    case 2:
    case 3:
    case 4:
    case 5:
    case 6:
    case 11: return kLen;
    case 7:
    case 8:
    case 9:
    case 10:
    case 12:
    case 14: return kVarint;
    case 13: return kLen;  // packed comments (a lone varint is accepted below)
    default: return -1;
  }
}

struct TopLevelCounts {
  size_t by_field[16] = {};
  std::vector<std::string_view> strings;  // string_table (field 6), as bytes
  bool strings_valid_utf8 = true;
};

// Walks the top-level fields. "" when they are well formed (for a `prefix`, up to where the
// data stops), else what is wrong. Unknown fields are allowed in a whole message (newer
// schema), not in a prefix being sniffed.
std::string ScanFields(std::string_view data, bool prefix, TopLevelCounts* counts) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()), int(data.size()));
  const int size = int(data.size());
  char where[64];
  for (int fields = 0;; ++fields) {
    const int at = in.CurrentPosition();
    if (at == size) return fields > 0 || !prefix ? "" : "an empty file";
    snprintf(where, sizeof where, " at byte %d", at);
    const bool near_end = size - at < 16;
    uint32_t tag = in.ReadTag();
    if (tag == 0)
      return prefix && near_end ? "" : std::string("a field tag, found a malformed varint") + where;
    const uint32_t field = tag >> 3;
    const int wire = int(tag & 7);
    const int expected = ExpectedWireType(field);
    const bool comment_varint = field == 13 && wire == kVarint;
    if (expected >= 0 && wire != expected && !comment_varint) {
      return "field " + std::to_string(field) + " with wire type " + std::to_string(expected) +
             ", found wire type " + std::to_string(wire) + where;
    }
    if (expected < 0 && prefix)
      return "a Profile field number, found " + std::to_string(field) + where;
    if (field < 16) ++counts->by_field[field];
    bool ok = true;
    if (wire == kVarint) {
      uint64_t v;
      ok = in.ReadVarint64(&v);
    } else if (wire == kLen) {
      uint32_t len;
      const int start = in.CurrentPosition();
      ok = in.ReadVarint32(&len) && len <= uint32_t(INT32_MAX) && in.Skip(int(len));
      if (ok && field == 6 && !prefix) {
        const int header = in.CurrentPosition() - int(len) - start;
        const std::string_view text = data.substr(size_t(start + header), len);
        counts->strings.push_back(text);
        if (counts->strings_valid_utf8 && !IsValidUtf8(text)) counts->strings_valid_utf8 = false;
      }
    } else if (wire == 1) {
      ok = in.Skip(8);
    } else if (wire == 5) {
      ok = in.Skip(4);
    } else {
      return "a supported wire type, found " + std::to_string(wire) + where;
    }
    if (!ok) {
      if (prefix) return "";
      return "field " + std::to_string(field) +
             " to be complete, found a malformed varint or the end of the data" + where +
             " (truncated?)";
    }
  }
}

// The message without its string_table fields (the scan has checked the framing).
std::string WithoutStringTable(std::string_view data) {
  std::string out;
  out.reserve(data.size());
  CodedInputStream in(reinterpret_cast<const uint8_t*>(data.data()), int(data.size()));
  while (in.CurrentPosition() < int(data.size())) {
    const int start = in.CurrentPosition();
    const uint32_t tag = in.ReadTag();
    const int wire = int(tag & 7);
    uint64_t v;
    uint32_t len;
    if (wire == kVarint) {
      in.ReadVarint64(&v);
    } else if (wire == kLen) {
      in.ReadVarint32(&len);
      in.Skip(int(len));
    } else {
      in.Skip(wire == 1 ? 8 : 4);
    }
    if ((tag >> 3) != 6)
      out.append(data.substr(size_t(start), size_t(in.CurrentPosition() - start)));
  }
  return out;
}

class Converter {
 public:
  Converter(const pb::Profile& p, const std::vector<std::string_view>& strings,
            const std::string& file, Profile* out, ParseError* error, size_t max_line_name_bytes)
      : p_(p),
        strings_(strings),
        file_(file),
        out_(out),
        error_(error),
        max_line_name_bytes_(max_line_name_bytes) {}

  bool Run() {
    if (strings_.empty() || !strings_[0].empty()) {
      return Fail("expected string_table[0] to be \"\", found " +
                  std::string(strings_.empty() ? "no string table" : "a non-empty string"));
    }
    if (!(SampleTypes() && Mappings() && Functions() && Locations() && Samples() && Rest()))
      return false;
    out_->variance_recorded = variance_types_ == 0xf && !out_->samples.empty();
    return true;
  }

 private:
  bool Fail(std::string what) {
    error_->file = file_;
    error_->line = 0;
    error_->expected = std::move(what);
    return false;
  }

  // Checks a string index; `what` names the field for the message.
  bool Str(int64_t index, const char* what, const std::string_view** s) {
    if (index < 0 || uint64_t(index) >= strings_.size()) {
      return Fail(std::string("expected ") + what + " to index the string table (" +
                  std::to_string(strings_.size()) + " strings), found " + std::to_string(index));
    }
    *s = &strings_[size_t(index)];
    return true;
  }

  bool SampleTypes() {
    static const char* const kSlots[] = {"inuse_objects", "inuse_space", "alloc_objects",
                                         "alloc_space"};
    std::string found;
    for (int i = 0; i < p_.sample_type_size(); ++i) {
      const std::string_view *type, *unit;
      if (!Str(p_.sample_type(i).type(), "sample_type.type", &type) ||
          !Str(p_.sample_type(i).unit(), "sample_type.unit", &unit)) {
        return false;
      }
      int slot = -1;
      for (int k = 0; k < 4; ++k) {
        if (*type == kSlots[k]) slot = k;
        // heapkit's recorded sampling variance of that value (profiler/format/heap_sample_values.h)
        if (*type == std::string(kSlots[k]) + "_variance") {
          variance_slot_of_value_.resize(size_t(i) + 1, -1);
          variance_slot_of_value_[size_t(i)] = k;
          variance_types_ |= 1 << k;
        }
      }
      slot_of_value_.push_back(slot);
      if (slot >= 0) out_->sample_types.emplace_back(*type);
      if (slot >= 2) out_->has_alloc_columns = true;
      found += (found.empty() ? "" : ", ") + std::string(*type) + "/" + std::string(*unit);
    }
    if (out_->sample_types.empty()) {
      return Fail(
          "expected a heap profile (sample types inuse_space, inuse_objects, alloc_space, "
          "alloc_objects), found " +
          (found.empty() ? std::string("no sample types") : found));
    }
    return true;
  }

  bool Mappings() {
    for (const pb::Mapping& m : p_.mapping()) {
      const std::string_view *name, *build_id;
      if (!Str(m.filename(), "mapping.filename", &name) ||
          !Str(m.build_id(), "mapping.build_id", &build_id)) {
        return false;
      }
      if (m.id() == 0 || !mapping_index_.emplace(m.id(), out_->mappings.size()).second) {
        return Fail("expected unique non-zero mapping ids, found " + std::to_string(m.id()));
      }
      Mapping out;
      out.start = m.memory_start();
      out.limit = m.memory_limit();
      out.offset = m.file_offset();
      out.perms = "r-xp";  // profile.proto keeps code mappings only
      out.path = *name;
      out.build_id = *build_id;
      char buf[128];
      snprintf(buf, sizeof buf, "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 0", out.start,
               out.limit, out.offset);
      if (out.limit > out.start) {
        out_->maps_text += buf;
        if (!out.path.empty()) out_->maps_text += "    " + out.path;
        out_->maps_text += '\n';
      }
      out_->mappings.push_back(std::move(out));
    }
    return true;
  }

  bool Functions() {
    for (const pb::Function& f : p_.function()) {
      const std::string_view *name, *system_name, *filename;
      if (!Str(f.name(), "function.name", &name) ||
          !Str(f.system_name(), "function.system_name", &system_name) ||
          !Str(f.filename(), "function.filename", &filename)) {
        return false;
      }
      if (f.id() == 0 || !function_index_.emplace(f.id(), &f).second) {
        return Fail("expected unique non-zero function ids, found " + std::to_string(f.id()));
      }
    }
    return true;
  }

  bool Locations() {
    // Key of a location in Profile terms: its address when that is non-zero and unique,
    // else a synthetic one above any user-space address.
    std::unordered_map<uint64_t, int> address_uses;
    for (const pb::Location& l : p_.location()) ++address_uses[l.address()];
    constexpr uint64_t kSyntheticBase = 0xfff0000000000000ull;
    for (int i = 0; i < p_.location_size(); ++i) {
      const pb::Location& l = p_.location(i);
      if (l.id() == 0) return Fail("expected non-zero location ids, found 0");
      if (l.mapping_id() != 0 && !mapping_index_.count(l.mapping_id())) {
        return Fail("expected location " + std::to_string(l.id()) +
                    " to name an existing mapping, found mapping id " +
                    std::to_string(l.mapping_id()));
      }
      const bool unique = l.address() != 0 && address_uses[l.address()] == 1;
      const uint64_t key = unique ? l.address() : kSyntheticBase + uint64_t(i);
      if (!location_key_.emplace(l.id(), key).second) {
        return Fail("expected unique location ids, found " + std::to_string(l.id()) + " twice");
      }
      if (l.line_size() == 0) continue;
      EmbeddedSymbol sym;
      sym.pc = key;
      if (l.mapping_id() != 0) sym.module = out_->mappings[mapping_index_[l.mapping_id()]].path;
      for (const pb::Line& line : l.line()) {
        std::string name, file;
        int64_t start_line = 0;
        if (line.function_id() != 0) {
          auto it = function_index_.find(line.function_id());
          if (it == function_index_.end()) {
            return Fail("expected location " + std::to_string(l.id()) +
                        " to name existing functions, found function id " +
                        std::to_string(line.function_id()));
          }
          name = strings_[size_t(it->second->name())];
          if (name.empty()) name = strings_[size_t(it->second->system_name())];
          file = strings_[size_t(it->second->filename())];
          start_line = it->second->start_line();
        }
        line_name_bytes_ += kLineCost + name.size() + file.size();
        if (line_name_bytes_ > max_line_name_bytes_) {
          return Fail(
              "expected at most " + std::to_string(max_line_name_bytes_ >> 20) +
              " MiB of frames (function and file names) in the locations' lines, found more");
        }
        if (name.empty()) {
          char buf[32];
          snprintf(buf, sizeof buf, "0x%" PRIx64, l.address());
          name = buf;
        }
        sym.frames.push_back(std::move(name));
        sym.files.push_back(std::move(file));
        sym.lines.push_back(int(line.line() > 0 && line.line() < INT32_MAX ? line.line() : 0));
        sym.start_lines.push_back(int(start_line > 0 && start_line < INT32_MAX ? start_line : 0));
      }
      out_->symbols.push_back(std::move(sym));
    }
    out_->symbols_partial = true;
    return true;
  }

  bool Samples() {
    out_->samples.reserve(size_t(p_.sample_size()));
    for (const pb::Sample& s : p_.sample()) {
      if (s.value_size() != p_.sample_type_size()) {
        return Fail("expected " + std::to_string(p_.sample_type_size()) +
                    " values per sample (one per sample type), found " +
                    std::to_string(s.value_size()));
      }
      for (const pb::Label& label : s.label()) {
        const std::string_view* unused;
        if (!Str(label.key(), "label.key", &unused) || !Str(label.str(), "label.str", &unused) ||
            !Str(label.num_unit(), "label.num_unit", &unused)) {
          return false;
        }
      }
      RawSample r;
      r.pcs.reserve(size_t(s.location_id_size()));
      for (uint64_t id : s.location_id()) {
        auto it = location_key_.find(id);
        if (it == location_key_.end()) {
          return Fail("expected samples to name existing locations, found location id " +
                      std::to_string(id));
        }
        r.pcs.push_back(it->second + 1);  // Profile PCs are return addresses (lookup pc + 1)
      }
      double v[4] = {0, 0, 0, 0};
      for (int i = 0; i < s.value_size(); ++i) {
        if (slot_of_value_[size_t(i)] >= 0) v[slot_of_value_[size_t(i)]] += double(s.value(i));
      }
      r.raw = {v[0], v[1], v[2], v[3]};
      r.value = r.raw;               // writers of profile.proto store un-sampled values
      if (variance_types_ == 0xf) {  // all four variances recorded
        double var[4] = {0, 0, 0, 0};
        for (size_t i = 0; i < variance_slot_of_value_.size(); ++i) {
          const int k = variance_slot_of_value_[i];
          if (k >= 0 && s.value(int(i)) > 0) var[k] += double(s.value(int(i)));
        }
        r.variance = {var[0], var[1], var[2], var[3]};
        r.has_variance = true;
      }
      out_->header_totals += r.raw;
      out_->samples.push_back(std::move(r));
    }
    return true;
  }

  bool Rest() {
    const std::string_view* s;
    if (!Str(p_.drop_frames(), "drop_frames", &s) || !Str(p_.keep_frames(), "keep_frames", &s) ||
        !Str(p_.period_type().type(), "period_type.type", &s) ||
        !Str(p_.period_type().unit(), "period_type.unit", &s) ||
        !Str(p_.default_sample_type(), "default_sample_type", &s)) {
      return false;
    }
    out_->default_sample_type = *s;
    for (int64_t c : p_.comment()) {
      if (!Str(c, "comment", &s)) return false;
      // heapkit's dump lines (profiler/format/heap_profile_encoder.h), else nothing
      ParseHeapkitComment(*s, out_);
    }
    out_->kind = ProfileKind::kHeapProfile;  // values are final: nothing left to un-sample
    out_->sample_period = p_.period() > 0 ? uint64_t(p_.period()) : 0;
    return true;
  }

  const pb::Profile& p_;
  const std::vector<std::string_view>& strings_;  // the string table as bytes (utf8.h)
  const std::string& file_;
  Profile* out_;
  ParseError* error_;
  size_t max_line_name_bytes_;
  size_t line_name_bytes_ = 0;
  std::vector<int> slot_of_value_;
  // Per value: the slot whose sampling variance it is ("inuse_space_variance": 1), else -1;
  // variance_types_: a bit per slot present.
  std::vector<int> variance_slot_of_value_;
  int variance_types_ = 0;
  std::unordered_map<uint64_t, size_t> mapping_index_;
  std::unordered_map<uint64_t, const pb::Function*> function_index_;
  std::unordered_map<uint64_t, uint64_t> location_key_;
};

}  // namespace

bool LooksLikeProfileProto(std::string_view head) {
  // Text (a legacy profile, even one starting with a blank line, i.e. the byte of field 1)
  // has no control bytes; every profile.proto has some (lengths, small varints, tags).
  bool control = false;
  for (unsigned char c : head) {
    if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') control = true;
  }
  if (!control) return false;
  TopLevelCounts counts;
  return ScanFields(head, /*prefix=*/true, &counts).empty();
}

bool DecodeProfileProto(std::string_view bytes, const std::string& file, Profile* profile,
                        ParseError* error, const ProtoLimits& limits) {
  *profile = Profile();
  profile->file = file;
  auto fail = [&](std::string what) {
    error->file = file;
    error->line = 0;
    error->expected = std::move(what);
    return false;
  };
  if (bytes.size() > limits.max_bytes || bytes.size() > size_t(INT32_MAX)) {
    return fail("expected a profile.proto message of at most " +
                std::to_string(limits.max_bytes >> 20) + " MiB, found " +
                std::to_string(bytes.size() >> 20) + " MiB");
  }
  TopLevelCounts counts;
  std::string problem = ScanFields(bytes, /*prefix=*/false, &counts);
  if (!problem.empty()) return fail("expected a profile.proto message: " + problem);
  struct Cap {
    int field;
    size_t max;
    const char* what;
  };
  const Cap caps[] = {{6, limits.max_strings, "strings"},
                      {2, limits.max_samples, "samples"},
                      {4, limits.max_locations, "locations"},
                      {5, limits.max_functions, "functions"},
                      {3, limits.max_mappings, "mappings"}};
  for (const Cap& c : caps) {
    if (counts.by_field[c.field] > c.max) {
      return fail("expected at most " + std::to_string(c.max) + " " + c.what + ", found " +
                  std::to_string(counts.by_field[c.field]));
    }
  }
  problem = CheckNestedCounts(bytes, limits);
  if (!problem.empty()) return fail("expected " + problem);
  google::protobuf::Arena arena;
  pb::Profile* message = google::protobuf::Arena::CreateMessage<pb::Profile>(&arena);
  // protobuf rejects a string table with invalid UTF-8 (utf8.h): then it parses the message
  // without it, and the converter reads the strings as bytes from the scan.
  std::string without_strings;
  std::string_view parsed = bytes;
  if (!counts.strings_valid_utf8) {
    without_strings = WithoutStringTable(bytes);
    parsed = without_strings;
  }
  if (!message->ParseFromArray(parsed.data(), int(parsed.size()))) {
    return fail(
        "expected a profile.proto message, found malformed protobuf inside a sample, "
        "location, function or mapping");
  }
  return Converter(
             *message, counts.strings, file, profile, error,
             std::min(limits.max_line_name_bytes, kLineNameBase + kLineNamesPerByte * bytes.size()))
      .Run();
}

}  // namespace heapkit::pprof
