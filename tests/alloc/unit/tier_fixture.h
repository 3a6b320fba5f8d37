// A private allocator back end (size map, page map, page heap, central lists) for unit tests.
#pragma once

#include <memory>

#include "alloc/central_free_list.h"
#include "alloc/page_heap.h"
#include "alloc/page_map.h"
#include "alloc/size_classes.h"

namespace heapkit::alloc::testing {

struct Tiers {
  explicit Tiers(int transfer_num_obj = 512) {
    sizemap.Init(transfer_num_obj);
    heap.Init(map.get(), 0, 0);
    for (int c = 1; c < sizemap.num_classes(); ++c) {
      central[c].Init(static_cast<uint32_t>(c), &sizemap, &heap);
    }
  }
  // The size class of `size`, its central list and its batch size.
  struct Class {
    uint32_t cls;
    CentralFreeList& list;
    int batch;
  };
  Class ClassFor(size_t size) {
    const uint32_t c = sizemap.SizeClass(size);
    return {c, central[c], sizemap.NumToMove(c)};
  }

  SizeMap sizemap;
  std::unique_ptr<PageMap> map = std::make_unique<PageMap>();
  PageHeap heap;
  CentralFreeList central[kNumClassesMax];
};

}  // namespace heapkit::alloc::testing
