/* A C program (no C++ runtime loaded) reaching operator new's failure path through the tc_new
 * entry points: the nothrow form returns NULL, the throwing form ends the process with one line
 * and SIGABRT (there is nothing to throw with), never a jump through a null weak reference. */
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

void* tc_new(size_t size);
void* tc_new_nothrow(size_t size, const void* nothrow_tag);

int main(void) {
  if (tc_new_nothrow((size_t)1 << 62, NULL) != NULL) {
    fprintf(stderr, "tc_new_nothrow(2^62) did not return NULL\n");
    return 1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    tc_new((size_t)1 << 62);
    _exit(0);
  }
  int status;
  if (waitpid(pid, &status, 0) != pid || !WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT) {
    fprintf(stderr, "tc_new(2^62) from C: want SIGABRT, got status %#x\n", status);
    return 1;
  }
  puts("ok");
  return 0;
}
