// The profile files in HEAP_PROFILE_FORMAT's formats (proto_profile_file.h).
#include "profiler/output/proto_profile_file.h"

#include <errno.h>
#include <string.h>

#include "alloc/internal/log.h"
#include "alloc/internal/safe_file.h"
#include "profiler/format/mapped_bytes.h"
#include "profiler/on_demand/on_demand_library.h"
#include "profiler/profiler_config.h"
#include "profiler/format/proto_profile.h"

namespace heapkit::prof {
namespace {

constexpr char kProtoSuffix[] = ".pb.gz";

struct GzipJob {
  const MappedBytes* proto;
  const OnDemandApi* api;
  MappedArena* arena;
};

bool WriteGzip(void* ctx, FdSink* sink) {
  auto* job = static_cast<GzipJob*>(ctx);
  return job->api->gzip(
      job->proto->data(), job->proto->size(),
      [](void* arena, size_t bytes) { return static_cast<MappedArena*>(arena)->Allocate(bytes); },
      job->arena,
      [](void* out, const char* data, size_t length) {
        auto* s = static_cast<FdSink*>(out);
        s->Append(data, length);
        return s->ok();
      },
      sink);
}

bool WriteBytes(void* ctx, FdSink* sink) {
  const auto* text = static_cast<const MemorySink*>(ctx);
  sink->Append(text->data(), text->size());
  return sink->ok();
}

// <path>.pb.gz from the rendered text; one line on failure.
void WriteProtoFile(const char* path, const MemorySink& text) {
  char name[4200];
  if (internal::FormatTo(name, sizeof(name), "%s%s", path, kProtoSuffix) + 1 >= sizeof(name)) {
    internal::Log("failed to write heap profile %s%s: the name is too long", path, kProtoSuffix);
    return;
  }
  const OnDemandApi* api = OnDemandLibraryIfLoaded();
  if (api == nullptr) {
    internal::Log("failed to write heap profile %s: the on-demand library (zlib) is not loaded",
                  name);
    return;
  }
  MappedBytes proto;
  if (!LegacyTextToProto(text.data(), text.size(), &proto)) {
    internal::Log("failed to write heap profile %s: out of memory", name);
    return;
  }
  MappedArena arena;
  GzipJob job{&proto, api, &arena};
  int err = 0;
  if (!WriteFileAtomically(name, &WriteGzip, &job, &err)) {
    const char* refusal = internal::ReplaceRefusal(err);
    internal::Log("failed to write heap profile %s: %s", name, refusal ? refusal : ErrName(err));
  }
}

}  // namespace

bool WriteProfileFiles(const char* path, const LegacyProfile& profile, ProfileFormat format,
                       int* error) {
  if (format == ProfileFormat::kLegacy) return WriteLegacyProfileFile(path, profile, error);
  // One rendering for both files, so that they hold the same moment.
  MemorySink text;
  if (!WriteLegacyProfile(&text, profile)) {
    if (error != nullptr) *error = ENOMEM;
    return false;
  }
  bool ok = true;
  if (format == ProfileFormat::kBoth) {
    ok = WriteFileAtomically(path, &WriteBytes, &text, error);
  }
  WriteProtoFile(path, text);
  return ok;
}

}  // namespace heapkit::prof
