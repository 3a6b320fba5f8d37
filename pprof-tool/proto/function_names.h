// The two names a profile.proto Function carries:
//   name         what reports print (the simplified C++ name, or the full one with --full_names)
//   system_name  the full demangled name (NodeInfo::full_name when the report name is shorter)
// The one place that decides both: the writer calls nothing else for names.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Views of the arguments of NamesForProto: valid as long as they are.
struct FunctionNames {
  std::string_view name;
  std::string_view system_name;
};

FunctionNames NamesForProto(std::string_view report_name, std::string_view full_name);

// True for the placeholders the symbolizer uses for addresses it could not name
// ("0x4005d0", "libfoo.so+0x1234"): such frames are written without a Line, so readers
// (and pprof-tool) can symbolize the address themselves.
bool IsUnsymbolizedName(const std::string& name);

}  // namespace heapkit::pprof
