// The stress program's workloads; each runs on its own thread until g_stop and leaves nothing
// allocated behind (what it hands to the queues, the consumers or the final drain free).
#pragma once

#include <cstdint>

namespace heapkit::stress {

void Producer(int id);   // allocates every way, hands objects to the queues
void Consumer(int id);   // pops, verifies, sometimes reallocs, frees (cross-thread frees)
void Reallocer(int id);  // realloc storms: grow/shrink with content checks
void Aligner(int id);    // memalign/posix_memalign/aligned_alloc/valloc/pvalloc/new(align)
void Churner(int id);    // short-lived threads that allocate and exit
void Forker(int id);     // fork from a busy process; the child allocates, verifies, exits
void Signaller(int id);  // pthread_kill(SIGUSR1) at random workers + ITIMER_PROF ticks
void InstallSignalHandlers();
void DrainQueues();  // verify and free what is left in the queues (after join)
void MakeCanaries();
void FreeCanaries();

}  // namespace heapkit::stress
