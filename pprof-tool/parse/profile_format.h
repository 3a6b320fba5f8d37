// Which kind of profile a file holds, from its first bytes: the legacy text formats this
// directory parses, or pprof's protocol buffer (profile.proto), plain or gzip-compressed, which
// go pprof writes (.pb.gz). Readers branch on it before parsing.
#pragma once

#include <string_view>

namespace heapkit::pprof {

enum class ProfileFormat {
  kLegacyText,  // anything else: the legacy parser decides (and names what it found)
  kProto,       // an uncompressed profile.proto message
  kProtoGzip,   // gzip data (a .pb.gz profile; the content is not inspected)
};

// head: the file's first bytes (16 are enough).
ProfileFormat DetectProfileFormat(std::string_view head);

// "a pprof protocol buffer profile (profile.proto)" and the like, for messages.
const char* ProfileFormatName(ProfileFormat format);

}  // namespace heapkit::pprof
