// LoadOnDemandLibrary for the shared libheapkit.so: dlopen libheapkit_ondemand.so from the
// directory this library was loaded from (on_demand_library.h). The path comes from dladdr of
// one of our own symbols, i.e. from the dynamic loader's record of libheapkit.so: absolute when
// the library was found through the search path or preloaded by absolute path (a relative
// LD_PRELOAD path stays relative to the current directory, as the loader took it; a privileged
// (AT_SECURE) process refuses such a path). Never from the environment.
#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <climits>
#include <cstring>

#include "alloc/common.h"
#include "alloc/internal/env.h"
#include "alloc/internal/log.h"
#include "profiler/on_demand/on_demand_library.h"

namespace heapkit::prof {
namespace {

constexpr char kLibraryName[] = "libheapkit_ondemand.so";

std::atomic<const OnDemandApi*> g_api{nullptr};
pthread_once_t g_once = PTHREAD_ONCE_INIT;

// Fills path with "<directory of libheapkit.so>/libheapkit_ondemand.so"; false if unknown.
bool LibraryPath(char* path, size_t size) {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LoadOnDemandLibrary), &info) == 0 ||
      info.dli_fname == nullptr) {
    return false;
  }
  const char* slash = strrchr(info.dli_fname, '/');
  if (slash == nullptr) return false;
  // A privileged process loads nothing relative to a current directory its caller chose.
  if (info.dli_fname[0] != '/' && internal::SecureExecution()) return false;
  const size_t dir_length = static_cast<size_t>(slash - info.dli_fname) + 1;
  if (dir_length + sizeof(kLibraryName) > size) return false;
  memcpy(path, info.dli_fname, dir_length);
  memcpy(path + dir_length, kLibraryName, sizeof(kLibraryName));
  return true;
}

void Load() {
  char path[PATH_MAX];
  if (!LibraryPath(path, sizeof(path))) {
    internal::Log(
        "cannot find the directory of libheapkit.so; %s not loaded (leak reports are "
        "not symbolized, stacks through unusual frames are cut)",
        kLibraryName);
    return;
  }
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    internal::Log(
        "cannot load the on-demand library: %s; leak reports are not symbolized, "
        "stacks through unusual frames are cut",
        error != nullptr ? error : path);
    return;
  }
  using Entry = const OnDemandApi* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, "heapkit_on_demand_api"));
  const OnDemandApi* api = entry != nullptr ? entry() : nullptr;
  if (api == nullptr || api->abi_version != kOnDemandAbiVersion ||
      api->size != sizeof(OnDemandApi)) {
    internal::Log(
        "%s does not belong to this libheapkit.so (interface version %u, want %u); "
        "not used",
        path, api != nullptr ? api->abi_version : 0, kOnDemandAbiVersion);
    return;  // the handle stays open: code of it may be on no stack, but closing gains nothing
  }
  g_api.store(api, std::memory_order_release);
}

}  // namespace

const OnDemandApi* LoadOnDemandLibrary() {
  pthread_once(&g_once, &Load);
  return g_api.load(std::memory_order_acquire);
}

HEAPKIT_ALWAYS_RUN_CODE const OnDemandApi* OnDemandLibraryIfLoaded() {
  return g_api.load(std::memory_order_acquire);
}

}  // namespace heapkit::prof
