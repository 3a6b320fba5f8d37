// A view's query string, go pprof's parameter names:
//   si=  sample index (inuse_space, inuse_objects, alloc_space, alloc_objects)
//   f= focus   i= ignore   h= hide   s= show   sf= show_from   (regular expressions)
//   dump=N     the dump numbered N (its file's .NNNN, else its 1-based position); dump=all:
//              the sum of the given profiles (model/dump_series.h: what is shown without dump=)
//   base=N     with dump=M: the difference dump M - dump N
// Parsing is strict: an unknown parameter value, an over-long value or a bad number is a
// one-line error the server answers with 400. Regexes are checked by the pipeline itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pprof-tool/report/pipeline.h"

namespace heapkit::pprof {

struct ViewQuery {
  bool has_sample_type = false;
  SampleType sample_type = SampleType::kInuseSpace;
  std::string focus, ignore, hide, show, show_from;
  int dump = -1;  // index of the dump shown; -1: the sum of all profiles
  int base = -1;  // index of the dump subtracted; -1: none
  // Each dump's number (model/dump_series.h), for encoding dump= and base=; empty: no dumps.
  std::vector<int> dump_numbers;

  // The query string that reproduces this view ("si=...&f=..."; "" when all defaults).
  std::string Encode() const;
};

// The longest value accepted for one parameter.
inline constexpr size_t kMaxQueryValue = 1024;

// `query->dump_numbers` must be set: dump= and base= are looked up there.
bool ParseViewQuery(const std::multimap<std::string, std::string>& params, ViewQuery* query,
                    std::string* error);

// Percent-encoding for a query value (RFC 3986 unreserved characters kept).
std::string UrlEncode(const std::string& value);

}  // namespace heapkit::pprof
