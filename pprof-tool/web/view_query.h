// A view's query string. The view options' parameters come from their table
// (report/view_options.h: each row with a URL name, go pprof's):
//   si=  sample index (inuse_space, inuse_objects, alloc_space, alloc_objects)
//   f= focus   i= ignore   h= hide   s= show   sf= show_from   (regular expressions)
// and two of the web UI's own:
//   dump=N     the dump numbered N (its file's .NNNN, else its 1-based position); dump=all:
//              the sum of the given profiles (model/dump_series.h: what is shown without dump=)
//   base=N     with dump=M: the difference dump M - dump N
//   window=T0:T1  a runtime timeline's window (seconds after profiling start): the views show
//              the stacks at its peak (model/runtime_timeline.h; checked by the web UI)
// Parsing is strict: an unknown parameter value, an over-long value or a bad number is a
// one-line error the server answers with 400. Regexes are checked by the pipeline itself.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pprof-tool/report/view_options.h"

namespace heapkit::pprof {

struct ViewQuery {
  ViewOptions view;    // the command line's, with the query's parameters applied
  int dump = -1;       // index of the dump shown; -1: the sum of all profiles
  int base = -1;       // index of the dump subtracted; -1: none
  std::string window;  // a runtime timeline's window=T0:T1 ("": none)
  // Each dump's number (model/dump_series.h), for encoding dump= and base=; empty: no dumps.
  std::vector<int> dump_numbers;

  // The query string that reproduces this view ("si=...&f=..."): every choice parameter, the
  // text ones that are not empty, a bool one when true, then dump=, base= and window=.
  std::string Encode() const;
};

// The text of `field`'s parameter for `view` ("": not written; e.g. an empty regex, or a value
// that no choice names, such as --sample_index=resident_space: the view's default then).
std::string ParameterText(const ViewField& field, const ViewOptions& view);

// The longest value accepted for one parameter.
inline constexpr size_t kMaxQueryValue = 1024;

// `query->dump_numbers` must be set: dump= and base= are looked up there.
bool ParseViewQuery(const std::multimap<std::string, std::string>& params, ViewQuery* query,
                    std::string* error);

// Percent-encoding for a query value (RFC 3986 unreserved characters kept).
std::string UrlEncode(const std::string& value);

}  // namespace heapkit::pprof
