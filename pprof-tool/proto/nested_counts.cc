#include "pprof-tool/proto/nested_counts.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstdint>

namespace heapkit::pprof {
namespace {

using google::protobuf::io::CodedInputStream;

// Counts of the repeated fields 1..4 of one message: a packed field counts its varints.
struct FieldCounts {
  uint64_t of[5] = {};
};

bool CountFields(std::string_view body, FieldCounts* c) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(body.data()), int(body.size()));
  while (in.CurrentPosition() < int(body.size())) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return false;
    const uint32_t field = tag >> 3;
    const int wire = int(tag & 7);
    uint64_t v;
    uint32_t len;
    uint64_t n = 1;
    if (wire == 0) {
      if (!in.ReadVarint64(&v)) return false;
    } else if (wire == 2) {
      if (!in.ReadVarint32(&len) || len > body.size()) return false;
      const int at = in.CurrentPosition();
      if (!in.Skip(int(len))) return false;
      if (field <= 2) {  // packed varints: location_id, value (Sample); a Location has no packed
        n = 0;           // repeated field there, and counting its bytes only overestimates
        for (uint32_t k = 0; k < len; ++k) n += (uint8_t(body[size_t(at) + k]) & 0x80) == 0;
      }
    } else if (wire == 1) {
      if (!in.Skip(8)) return false;
    } else if (wire == 5) {
      if (!in.Skip(4)) return false;
    } else {
      return false;
    }
    if (field < 5) c->of[field] += n;
  }
  return true;
}

}  // namespace

std::string CheckNestedCounts(std::string_view message, const ProtoLimits& limits) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()), int(message.size()));
  uint64_t total_ids = 0, total_labels = 0, total_lines = 0;
  while (in.CurrentPosition() < int(message.size())) {
    const uint32_t tag = in.ReadTag();
    if (tag == 0) break;
    const uint32_t field = tag >> 3;
    const int wire = int(tag & 7);
    uint64_t v;
    uint32_t len;
    if (wire == 0) {
      in.ReadVarint64(&v);
      continue;
    }
    if (wire != 2) {
      in.Skip(wire == 1 ? 8 : 4);
      continue;
    }
    if (!in.ReadVarint32(&len)) break;
    const std::string_view body = message.substr(size_t(in.CurrentPosition()), len);
    in.Skip(int(len));
    if (field != 2 && field != 4) continue;
    FieldCounts c;
    const char* what = field == 2 ? "sample" : "location";
    if (!CountFields(body, &c))
      return std::string("a well-formed ") + what + ", found malformed fields inside one";
    auto over = [](uint64_t n, size_t max, const char* name, const char* in_what) {
      return "at most " + std::to_string(max) + " " + name + " in " + in_what + ", found " +
             std::to_string(n);
    };
    if (field == 2) {
      if (c.of[1] > limits.max_frames_per_sample)
        return over(c.of[1], limits.max_frames_per_sample, "location ids", "a sample");
      if (c.of[2] > limits.max_values_per_sample)
        return over(c.of[2], limits.max_values_per_sample, "values", "a sample");
      if (c.of[3] > limits.max_labels_per_sample)
        return over(c.of[3], limits.max_labels_per_sample, "labels", "a sample");
      total_ids += c.of[1];
      total_labels += c.of[3];
    } else {
      if (c.of[4] > limits.max_lines_per_location)
        return over(c.of[4], limits.max_lines_per_location, "lines", "a location");
      total_lines += c.of[4];
    }
  }
  if (total_ids > limits.max_frames)
    return "at most " + std::to_string(limits.max_frames) + " location ids in all samples, found " +
           std::to_string(total_ids);
  if (total_labels > limits.max_labels)
    return "at most " + std::to_string(limits.max_labels) + " labels in all samples, found " +
           std::to_string(total_labels);
  if (total_lines > limits.max_lines)
    return "at most " + std::to_string(limits.max_lines) + " lines in all locations, found " +
           std::to_string(total_lines);
  return "";
}

}  // namespace heapkit::pprof
