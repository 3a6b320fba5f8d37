// The command line's flags for the view options, made from report/view_options.h's table:
// a text, number or bool member is one option (--focus=R, --nodecount=N, --cum), an enum member
// one flag per choice (--inuse_space, --lines ...), at most one of which may be given.
#pragma once

#include <string>
#include <vector>

#include "pprof-tool/report/view_options.h"

namespace CLI {
class App;
}

namespace heapkit::pprof {

// Which enum members a flag chose, and how many flags chose each (more than one: an error).
class ViewChoicesGiven {
 public:
  bool Given(ViewMember member) const;
  void Count(const ViewField* field) { given_.push_back(field); }
  // "choose one of --a, --b, ..." for a member that more than one flag chose.
  bool Check(std::string* error) const;

 private:
  std::vector<const ViewField*> given_;
};

// Defines the flags of the rows of `group`, bound to *view, in the table's order.
void DefineViewFlags(CLI::App& app, const char* group, ViewOptions* view, ViewChoicesGiven* given);

}  // namespace heapkit::pprof
