// The repeated fields inside profile.proto's samples and locations, counted before parsing.
//
// The top-level caps (ProtoLimits) count samples, locations and functions, but one sample can
// hold millions of location ids or labels and one location millions of Lines, each a byte or
// two of input and tens of bytes once parsed (a 32 KB .pb.gz took 1.3-2.0 GiB that way). This
// scan walks every Sample and Location with protobuf's CodedInputStream (packed fields are
// counted by their varints without decoding them) and checks each count against the limits
// before anything is allocated for it.
#pragma once

#include <string>
#include <string_view>

#include "pprof-tool/proto/profile_reader.h"

namespace heapkit::pprof {

// "" when every sample and location is within `limits`, else what is wrong ("at most 65536
// location ids in a sample, found 4194304"). The message's framing has been checked already.
std::string CheckNestedCounts(std::string_view message, const ProtoLimits& limits);

}  // namespace heapkit::pprof
