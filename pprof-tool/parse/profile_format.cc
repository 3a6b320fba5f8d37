#include "pprof-tool/parse/profile_format.h"

namespace heapkit::pprof {

ProfileFormat DetectProfileFormat(std::string_view head) {
  auto byte = [&](size_t i) { return i < head.size() ? static_cast<unsigned char>(head[i]) : 0; };
  if (byte(0) == 0x1f && byte(1) == 0x8b) return ProfileFormat::kProtoGzip;
  // profile.proto starts with field 1 (sample_type, a length-delimited ValueType: tag 0x0a),
  // its length as a varint, then ValueType's field 1 (type, a varint: tag 0x08). A text
  // profile never has the control byte 0x08 there.
  if (byte(0) == 0x0a) {
    size_t i = 1;
    while (i < 6 && (byte(i) & 0x80)) ++i;
    if (byte(i + 1) == 0x08) return ProfileFormat::kProto;
  }
  return ProfileFormat::kLegacyText;
}

const char* ProfileFormatName(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::kProto: return "a pprof protocol buffer profile (profile.proto)";
    case ProfileFormat::kProtoGzip:
      return "gzip-compressed data (a pprof protocol buffer profile, .pb.gz?)";
    case ProfileFormat::kLegacyText: return "a legacy heap profile";
  }
  return "?";
}

}  // namespace heapkit::pprof
