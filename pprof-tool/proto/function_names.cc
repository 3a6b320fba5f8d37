#include "pprof-tool/proto/function_names.h"

namespace heapkit::pprof {
namespace {

bool IsHexDigits(const std::string& s, size_t from) {
  if (from >= s.size()) return false;
  for (size_t i = from; i < s.size(); ++i) {
    char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  }
  return true;
}

}  // namespace

FunctionNames NamesForProto(std::string_view report_name, std::string_view full_name) {
  return {report_name, full_name.empty() ? report_name : full_name};
}

bool IsUnsymbolizedName(const std::string& name) {
  if (name.rfind("0x", 0) == 0 && IsHexDigits(name, 2)) return true;
  size_t plus = name.rfind("+0x");
  return plus != std::string::npos && plus > 0 && IsHexDigits(name, plus + 3);
}

}  // namespace heapkit::pprof
