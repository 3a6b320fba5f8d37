// A lock-free list that only grows: nodes are pushed at the front and never removed, so a
// reader that loads the head (acquire) may follow the `next` links without a lock while other
// threads push (each node's link is written before the node is published).
#pragma once

#include <atomic>

namespace heapkit::internal {

template <typename T>
void PushFront(std::atomic<T*>* head, T* node, T* T::*next) {
  T* first = head->load(std::memory_order_relaxed);
  do {
    node->*next = first;
  } while (!head->compare_exchange_weak(first, node, std::memory_order_release,
                                        std::memory_order_relaxed));
}

}  // namespace heapkit::internal
