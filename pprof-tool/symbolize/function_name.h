// Turning symbol names into the names reports print: demangle C++ (abi::__cxa_demangle), drop
// the parameter list and trailing qualifiers, drop a template function's return type, strip
// symbol versions ("malloc@@GLIBC_2.2.5" -> "malloc"). Templates arguments are kept.
#pragma once

#include <string>
#include <string_view>

namespace heapkit::pprof {

// Full pipeline for a raw (possibly mangled) symbol or DWARF linkage name.
std::string CleanFunctionName(std::string_view raw);

// Only the parameter-list / return-type simplification of an already demangled name.
std::string SimplifyDemangled(std::string_view demangled);

}  // namespace heapkit::pprof
