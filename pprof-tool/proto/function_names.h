// The two names a profile.proto Function carries, derived from one report name:
//   name         what reports print (the simplified C++ name)
//   system_name  the full name (the symbol as the symbolizer produced it)
// The one place that decides both: the writer calls nothing else for names.
#pragma once

#include <string>

namespace heapkit::pprof {

struct FunctionNames {
  std::string name;
  std::string system_name;
};

FunctionNames NamesForProto(const std::string& report_name);

// True for the placeholders the symbolizer uses for addresses it could not name
// ("0x4005d0", "libfoo.so+0x1234"): such frames are written without a Line, so readers
// (and pprof-tool) can symbolize the address themselves.
bool IsUnsymbolizedName(const std::string& name);

}  // namespace heapkit::pprof
