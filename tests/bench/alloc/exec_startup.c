/* Start-up cost of a preloaded allocator in short processes (a build, a shell script): spawns a
 * program N times with LD_PRELOAD=<lib> ("" = none) and prints the mean wall time per spawn and
 * the mean CPU time (user + system) of each child, in microseconds. CPU time is what the spawn
 * itself costs; on a loaded machine it varies far less than wall time, which includes waiting
 * for a core. The launcher itself never loads <lib>.
 * Usage: exec_startup <N> <lib or ""> <program> [args...] */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

extern char** environ;

int main(int argc, char** argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: exec_startup <N> <lib or \"\"> <program> [args...]\n");
    return 2;
  }
  int n = atoi(argv[1]);
  char preload[4096];
  snprintf(preload, sizeof preload, "LD_PRELOAD=%s", argv[2]);
  char* env[] = {preload, NULL};
  char* empty_env[] = {NULL};
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; ++i) {
    pid_t pid;
    if (posix_spawn(&pid, argv[3], NULL, NULL, argv + 3, argv[2][0] ? env : empty_env) != 0) {
      perror("posix_spawn");
      return 1;
    }
    int status;
    if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      fprintf(stderr, "exec_startup: %s failed under %s\n", argv[3], argv[2]);
      return 1;
    }
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double us = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / 1e3 / n;
  struct rusage children;
  getrusage(RUSAGE_CHILDREN, &children);
  double cpu_us = ((children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e6 +
                   children.ru_utime.tv_usec + children.ru_stime.tv_usec) /
                  n;
  printf("%.1f %.1f\n", us, cpu_us);
  return 0;
}
