// LoadOnDemandLibrary for the static archive libheapkit.a: the on-demand parts
// (on_demand_api.cc, the symbolizer) are linked in, so the table is always there. Referencing
// heapkit_on_demand_api here is what pulls them out of the archive.
#include "profiler/on_demand/on_demand_library.h"

namespace heapkit::prof {

const OnDemandApi* LoadOnDemandLibrary() { return heapkit_on_demand_api(); }

const OnDemandApi* OnDemandLibraryIfLoaded() { return heapkit_on_demand_api(); }

}  // namespace heapkit::prof
