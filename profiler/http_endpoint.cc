#include "profiler/http_endpoint.h"

#include <string.h>

#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "alloc/observer_hooks.h"
#include "gperftools/malloc_extension_c.h"
#include "profiler/dump_triggers.h"
#include "profiler/on_demand_library.h"
#include "profiler/output_sink.h"
#include "profiler/profiler_config.h"
#include "profiler/sample_recorder.h"

namespace heapkit::prof {
namespace {

void HeapSample(void (*sink)(void*, const char*, size_t), void* ctx) {
  if (!SampleRecordingOn()) return;
  CallbackSink out(sink, ctx);
  WriteTableProfile(&out);
}

}  // namespace

void StartHttpEndpointFromEnvironment() {
  const char* raw = internal::EnvRaw("HEAPKIT_HTTP");
  if (raw == nullptr || raw[0] == '\0') return;
  char address[256];
  if (strlen(raw) >= sizeof(address)) {
    internal::Log("HEAPKIT_HTTP is too long; the HTTP endpoint is off");
    return;
  }
  memcpy(address, raw, strlen(raw) + 1);
  if (!alloc::SampleParameterFromEnvironment() && alloc::GetSampleParameter() <= 0) {
    alloc::SetSampleParameter(kDefaultSampleParameter);
  }
  if (!SampleRecordingOn() && alloc::GetSampleParameter() > 0) EnableSampleRecording();
  const OnDemandApi* api = LoadOnDemandLibrary();
  if (api == nullptr) {
    internal::Log("HEAPKIT_HTTP: the on-demand library is not available; the HTTP endpoint is "
                  "off");
    return;
  }
  char message[256];
  if (!api->start_http_endpoint(address, &HeapSample, &MallocExtension_GetNumericProperty,
                                message, sizeof(message))) {
    internal::Log("%s; the HTTP endpoint is off", message);
    return;
  }
  const size_t length = strlen(address);
  if (length >= 2 && address[length - 2] == ':' && address[length - 1] == '0') {
    internal::Log("HTTP endpoint listening on %s", message);
  }
}

}  // namespace heapkit::prof
