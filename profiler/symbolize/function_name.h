// Function names as reports show them. Three forms of one C++ function:
//   full        the whole demangled name: "void std::vector<int, std::allocator<int> >::
//               _M_realloc_insert<int const&>(__gnu_cxx::__normal_iterator<...>, int const&)"
//   cleaned     what the symbolizer stores in SourceFrame::function: demangled, parameter
//               list, trailing qualifiers and a template function's return type dropped,
//               symbol versions ("@GLIBC_2.2.5") stripped, template arguments kept
//   simplified  cleaned without any template arguments: "std::vector::_M_realloc_insert"
//               (go pprof's default). "operator<", "operator<<", "operator->" keep their
//               spelling; lambda and local-entity braces "{lambda(int)#1}" are kept whole.
// C names are the same in all three forms.
#pragma once

#include <string>
#include <string_view>

#include "profiler/symbolize/symbolizer.h"

namespace heapkit::pprof {

// raw (possibly mangled) symbol or DWARF linkage name -> cleaned.
std::string CleanFunctionName(std::string_view raw);

// Only the parameter-list / return-type simplification of an already demangled name.
std::string SimplifyDemangled(std::string_view demangled);

// cleaned (or full) -> simplified.
std::string SimplifiedFunctionName(std::string_view name);

// The full name of a symbolized frame: its linkage name demangled whole; frame.function when
// there is no linkage name or it does not demangle.
std::string FullFunctionName(const SourceFrame& frame);

}  // namespace heapkit::pprof
