// A worker thread that blocks every signal (xz -T2's workers, jemalloc's background thread) and
// holds the only pointer to a 96-byte heap block while main exits. It prints its tid.
//   blocking_thread [stack|register|churn] [seccomp-eperm|seccomp-kill|vfork]
// stack: the pointer is in a local of the worker, which sleeps in pause();
// register: the pointer is only in a register (r12) of the spinning worker (x86-64);
// churn: the worker frees the block at about the time main exits, then keeps allocating and
//   freeing, so the check stops it anywhere, inside malloc and free too.
// seccomp-eperm / seccomp-kill: ptrace(2) fails with EPERM / kills the caller (a container's
// policy), installed before the worker starts. vfork: the worker (stack) then waits for a
// vfork child for 2 s, a wait no ptrace interrupt ends: the ptrace helper does not answer. main
// returns only once the child runs, so the check always finds the worker inside that wait.
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static pthread_barrier_t g_started;
static const char* g_mode = "stack";
static int g_vfork = 0;
static int g_in_vfork[2] = {-1, -1};  // the vfork child writes a byte: its parent waits now

static void Announce(void) {
  printf("worker %d\n", gettid());
  fflush(stdout);
  pthread_barrier_wait(&g_started);
}

static void HoldOnStack(void) {
  char* volatile held = malloc(96);
  memset(held, 7, 96);
  Announce();
  if (g_vfork && vfork() == 0) {
    (void)!write(g_in_vfork[1], "v", 1);
    sleep(2);
    _exit(0);
  }
  for (;;) pause();
}

static void HoldInRegister(void) {
#if defined(__x86_64__)
  char* volatile slot = malloc(96);
  memset(slot, 7, 96);
  Announce();
  // The only copy moves into r12; the stack slot is cleared; the thread spins.
  __asm__ volatile("mov (%0), %%r12\n\tmovq $0, (%0)\n1:\tpause\n\tjmp 1b"
                   :
                   : "r"(&slot)
                   : "r12", "memory");
#else
  HoldOnStack();
#endif
}

static void Churn(void) {
  char* volatile held = malloc(96);
  memset(held, 7, 96);
  Announce();
  usleep(1000);  // main is exiting: the check may run before or after this free
  free(held);
  held = NULL;
  for (unsigned i = 0;; ++i) {
    char* volatile p = malloc(16 + i % 4000);
    p[0] = 1;
    free(p);
  }
}

static void* Worker(void* arg) {
  (void)arg;
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, NULL);
  if (strcmp(g_mode, "register") == 0) HoldInRegister();
  if (strcmp(g_mode, "churn") == 0) Churn();
  HoldOnStack();
  return NULL;
}

static void ForbidPtrace(unsigned action) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {sizeof(filter) / sizeof(filter[0]), filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0) {
    perror("seccomp");
    exit(2);
  }
}

int main(int argc, char** argv) {
  if (argc > 1) g_mode = argv[1];
  if (argc > 2 && strcmp(argv[2], "seccomp-eperm") == 0)
    ForbidPtrace(SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA));
  if (argc > 2 && strcmp(argv[2], "seccomp-kill") == 0) ForbidPtrace(SECCOMP_RET_KILL_PROCESS);
  g_vfork = argc > 2 && strcmp(argv[2], "vfork") == 0;
  if (g_vfork && pipe(g_in_vfork) != 0) {
    perror("pipe");
    exit(2);
  }
  pthread_barrier_init(&g_started, NULL, 2);
  pthread_t t;
  pthread_create(&t, NULL, Worker, NULL);
  pthread_barrier_wait(&g_started);
  char byte;
  if (g_vfork && read(g_in_vfork[0], &byte, 1) != 1) {
    perror("read");
    exit(2);
  }
  return 0;
}
