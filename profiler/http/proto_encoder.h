// The endpoint's protocol-buffers encoder: the shared wire encoder (profiler/base/proto_wire.h) on
// a std::string.
#pragma once

#include <string>

#include "profiler/base/proto_wire.h"

namespace heapkit::prof::http {

using ProtoEncoder = ProtoWire<std::string>;

}  // namespace heapkit::prof::http
