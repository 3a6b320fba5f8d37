// `pprof-tool --settings`: every environment variable heapkit reads, component by component, as
// the component READMEs' settings tables (alloc/internal/settings.h).
#pragma once

#include <string>

namespace heapkit::pprof {

std::string SettingsListing();

}  // namespace heapkit::pprof
