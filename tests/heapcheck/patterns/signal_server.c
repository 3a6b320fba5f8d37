// A server stopped by a signal: a worker thread holds a live object, 55 bytes are lost, and
// the process then gets the signal named by argv[1] (TERM or INT) from outside — here sent to
// itself with kill(), which is the same process-directed signal — and keeps serving
// (sleeping) until it dies.
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* Worker(void* arg) {
  (void)arg;
  char* volatile held = malloc(4000);  // live: on this thread's stack
  memset(held, 3, 4000);
  for (;;) sleep(1);
  return NULL;
}

int main(int argc, char** argv) {
  const int sig = argc > 1 && strcmp(argv[1], "INT") == 0 ? SIGINT : SIGTERM;
  pthread_t t;
  pthread_create(&t, NULL, Worker, NULL);
  char* volatile lost = malloc(55);
  memset(lost, 4, 55);
  lost = NULL;
  printf("serving\n");
  fflush(stdout);
  usleep(20000);
  kill(getpid(), sig);
  for (;;) sleep(1);
}
