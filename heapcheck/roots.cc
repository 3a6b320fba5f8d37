#include "heapcheck/roots.h"

#include <dlfcn.h>
#include <link.h>

#include <cstring>

#include "alloc/live_objects.h"

namespace heapkit::check {
namespace {

// Fallbacks for glibc 2.36 x86-64 when the private symbols are not found.
size_t g_static_tls_size = 4096;
size_t g_pthread_size = 2304;
bool g_layout_known = false;

bool IsLoaderName(const char* name) {
  if (name == nullptr) return false;
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  return std::strncmp(base, "ld-linux", 8) == 0 || std::strncmp(base, "ld.so", 5) == 0 ||
         std::strncmp(base, "ld-2.", 5) == 0;
}

struct ModuleWalk {
  LoadedModules* modules;
  uintptr_t runtime_code;
};

// True for a shared object (not the main program: its name is empty) with a PT_LOAD segment
// holding `address`.
bool SharedObjectHolds(const dl_phdr_info* info, uintptr_t address) {
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') return false;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    if (ph.p_type == PT_LOAD && address >= start && address - start < ph.p_memsz) return true;
  }
  return false;
}

int ModuleCallback(dl_phdr_info* info, size_t, void* data) {
  const auto* walk = static_cast<const ModuleWalk*>(data);
  LoadedModules* modules = walk->modules;
  const bool loader = IsLoaderName(info->dlpi_name);
  const bool runtime = SharedObjectHolds(info, walk->runtime_code);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD) continue;
    uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    Region r{start, start + ph.p_memsz};
    if ((ph.p_flags & PF_W) && !runtime) {
      if (!modules->writable.PushBack(r)) return 1;
    }
    if (!modules->segments.PushBack(r)) return 1;
    if (loader && (ph.p_flags & PF_X)) {
      if (!modules->loader_text.PushBack(r)) return 1;
    }
  }
  return 0;
}

// Reads a pointer-sized word if address lies in a readable mapping.
bool ReadWord(const ProcMaps& maps, uintptr_t address, uintptr_t* out) {
  const MapsLine* e = maps.Find(address);
  if (e == nullptr || !e->readable || address + sizeof(uintptr_t) > e->limit) return false;
  std::memcpy(out, reinterpret_cast<const void*>(address), sizeof(uintptr_t));
  return true;
}

}  // namespace

bool CollectModules(LoadedModules* modules, uintptr_t runtime_code) {
  modules->writable.Clear();
  modules->loader_text.Clear();
  modules->segments.Clear();
  ModuleWalk walk{modules, runtime_code};
  return dl_iterate_phdr(ModuleCallback, &walk) == 0;
}

bool CollectModules(LoadedModules* modules) {
  bool (*self)(LoadedModules*) = &CollectModules;
  return CollectModules(modules, reinterpret_cast<uintptr_t>(self));
}

void InitThreadLayout() {
  if (g_layout_known) return;
  using GetTlsStaticInfo = void (*)(size_t*, size_t*);
  auto get_info =
      reinterpret_cast<GetTlsStaticInfo>(dlsym(RTLD_DEFAULT, "_dl_get_tls_static_info"));
  if (get_info != nullptr) {
    size_t size = 0, align = 0;
    get_info(&size, &align);
    if (size > 0 && size < (64u << 20)) g_static_tls_size = size;
  }
  auto* sizeof_pthread =
      static_cast<const uint32_t*>(dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread"));
  if (sizeof_pthread != nullptr && *sizeof_pthread > 0 && *sizeof_pthread < 65536)
    g_pthread_size = *sizeof_pthread;
  g_layout_known = true;
}

uintptr_t CurrentThreadPointer() {
#if defined(__x86_64__)
  uintptr_t tp;
  asm volatile("mov %%fs:0, %0" : "=r"(tp));
  return tp;
#else
  return reinterpret_cast<uintptr_t>(__builtin_thread_pointer());
#endif
}

namespace {

// [start, end) of the heap block or mapping that holds `address` (heap block first); *in_heap
// says which. False if neither.
bool RegionHolding(const ProcMaps& maps, uintptr_t address, Region* r, bool* in_heap) {
  uintptr_t start = 0;
  size_t size = 0;
  if (alloc::FindHeapObject(address, &start, &size)) {
    *r = Region{start, start + size};
    *in_heap = true;
    return true;
  }
  const MapsLine* m = maps.Find(address);
  if (m == nullptr) return false;
  *r = Region{m->start, m->limit};
  *in_heap = false;
  return true;
}

// The thread's own stack (see roots.h). False if it cannot be told.
bool OwnStack(const ProcMaps& maps, uintptr_t tp, uintptr_t tls_end, bool main_thread, Region* own,
              bool* in_heap) {
  if (main_thread) {
    for (size_t i = 0; i < maps.size(); ++i) {
      const MapsLine& e = maps[i];
      if (e.path == "[stack]") {
        *own = Region{e.start, e.limit};
        *in_heap = false;
        return true;
      }
    }
    return false;
  }
  if (tp == 0 || !RegionHolding(maps, tp, own, in_heap)) return false;
  if (tls_end < own->end) own->end = tls_end;
  return own->start < own->end;
}

}  // namespace

ThreadRegions AddThreadRegions(const ProcMaps& maps, uintptr_t sp, uintptr_t tp, bool interrupted,
                               bool main_thread, MmapArray<Region>* out,
                               MmapArray<uintptr_t>* stack_blocks, MmapArray<Region>* stacks) {
  constexpr ThreadRegions kOutOfMemory = ThreadRegions::kOutOfMemory;
  // TLS block + struct pthread: [tp + sizeof(pthread) - static_size, tp + sizeof(pthread)).
  // (x86-64: TLS_TCB_AT_TP, the static TLS blocks sit right below the thread pointer.)
  const uintptr_t tls_end = tp + g_pthread_size;
  const uintptr_t tls_start = tls_end > g_static_tls_size ? tls_end - g_static_tls_size : 0;
  auto from_sp = [&](const Region& r) {
    return interrupted && sp - r.start >= 128 ? sp - 128 : sp;
  };

  Region own{0, 0};
  bool own_in_heap = false;
  const bool have_own = OwnStack(maps, tp, tls_end, main_thread, &own, &own_in_heap);
  bool stack_found = have_own;
  auto note_stack = [&](const Region& r, bool in_heap) {
    return in_heap || stacks == nullptr || stacks->PushBack(r);
  };
  if (have_own && !note_stack(own, own_in_heap)) return kOutOfMemory;
  if (sp != 0 && have_own && sp >= own.start && sp < own.end) {
    if (!maps.AddReadable(from_sp(own), own.end, out)) return kOutOfMemory;
  } else if (sp != 0) {
    // SP is not on the thread's own stack: all of that, and the region SP is in from SP up.
    if (have_own && !maps.AddReadable(own.start, own.end, out)) return kOutOfMemory;
    Region current;
    bool current_in_heap = false;
    if (RegionHolding(maps, sp, &current, &current_in_heap)) {
      stack_found = true;
      if (tp > sp && tp < current.end && tls_end < current.end) current.end = tls_end;
      if (!maps.AddReadable(from_sp(current), current.end, out)) return kOutOfMemory;
      // Only what was scanned: below SP may lie other coroutines' stacks of the same mapping.
      if (!note_stack(Region{from_sp(current), current.end}, current_in_heap)) return kOutOfMemory;
      if (current_in_heap && !stack_blocks->PushBack(current.start)) return kOutOfMemory;
    }
  }
  if (have_own && own_in_heap && !stack_blocks->PushBack(own.start)) return kOutOfMemory;
  if (tp != 0) {
    const MapsLine* block = maps.Find(tp);
    if (block != nullptr) {
      uintptr_t s = tls_start > block->start ? tls_start : block->start;
      uintptr_t e = tls_end < block->limit ? tls_end : block->limit;
      if (!maps.AddReadable(s, e, out)) return kOutOfMemory;
    }
#if defined(__x86_64__)
    // DTV: tcbhead_t { void* tcb; dtv_t* dtv; ... }; dtv[-1].counter = number of slots;
    // each slot is 16 bytes { void* val; void* to_free; }.
    uintptr_t dtv = 0, slots = 0;
    if (ReadWord(maps, tp + sizeof(uintptr_t), &dtv) && dtv >= 16 &&
        ReadWord(maps, dtv - 16, &slots) && slots < (1u << 20)) {
      if (!maps.AddReadable(dtv - 16, dtv + 16 * (slots + 1), out)) return kOutOfMemory;
    }
#endif
  }
  return stack_found ? ThreadRegions::kAdded : ThreadRegions::kStackNotMapped;
}

bool TopHoldsThreadControlBlock(uintptr_t start, uintptr_t end) {
#if defined(__x86_64__)
  // tcbhead_t { void* tcb; dtv_t* dtv; void* self; ... } at the thread pointer, which glibc
  // puts sizeof(struct pthread) below the stack's end, rounded down to the TLS alignment.
  constexpr uintptr_t kSlack = 4096;
  if (end - start < g_pthread_size + 3 * sizeof(uintptr_t)) return false;
  uintptr_t a = end - g_pthread_size;
  const uintptr_t lowest = a - start > kSlack ? a - kSlack : start;
  for (a &= ~uintptr_t{15}; a >= lowest; a -= 16) {
    const auto* w = reinterpret_cast<const uintptr_t*>(a);
    if (w[0] == a && w[2] == a) return true;
  }
#else
  (void)start;
  (void)end;
#endif
  return false;
}

}  // namespace heapkit::check
