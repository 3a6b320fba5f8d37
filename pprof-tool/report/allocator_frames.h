// Which frames are the allocator's own (dropped from the leaf end of every stack, like
// pprof's DropFrames for heap profiles): the C allocation entry points, operator new/delete,
// tcmalloc/heapkit internals. std::allocator<T>::allocate and _M_allocate are kept (like
// gperftools' pprof), so container growth shows where it happens.
#pragma once

#include <string_view>

namespace heapkit::pprof {

bool IsAllocatorFrame(std::string_view function, std::string_view module);

}  // namespace heapkit::pprof
