// The live profile server (profiler/http/http_server.h, in the on-demand library), started by
// HEAPKIT_HTTP=host:port or by HeapkitStartHttpServer (include/heapkit/http_server.h). The
// variable is read once at start-up; a privileged (AT_SECURE) process ignores it like every
// heapkit variable (alloc/internal/env.h). One server per process.
#pragma once

#include <cstddef>

namespace heapkit::prof {

// Turns sampling on at the default period (unless TCMALLOC_SAMPLE_PARAMETER chose one), loads
// the on-demand library and starts the server. false with one line in message if it is
// running already, the address is bad or cannot be bound; else message gets "host:port".
bool StartHttpEndpoint(const char* address, char* message, size_t message_size);

// HEAPKIT_HTTP: a bad address or a failed bind is one line on stderr, the program runs on
// without the endpoint. With port 0, one line names the port.
void StartHttpEndpointFromEnvironment();

}  // namespace heapkit::prof
