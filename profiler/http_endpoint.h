// HEAPKIT_HTTP=host:port: live heap profiles and metrics over HTTP (profiler/http/http_server.h,
// in the on-demand library). Read once at start-up; a privileged (AT_SECURE) process ignores
// it like every heapkit variable (alloc/internal/env.h).
#pragma once

namespace heapkit::prof {

// Turns sampling on at the default period (unless TCMALLOC_SAMPLE_PARAMETER chose one), loads
// the on-demand library and starts the endpoint. A bad address or a failed bind: one line on
// stderr, the program runs on without the endpoint. With port 0, one line names the port.
void StartHttpEndpointFromEnvironment();

}  // namespace heapkit::prof
