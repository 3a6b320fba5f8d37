// gdb runs `iconv -l` and parses its output; every child inherits HEAPCHECK. Here the parent
// forks a child that allocates and frees (a clean check) and exits through exit(), and prints
// what the child wrote on stderr: with heapkit it must be exactly what it is without.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  int pipefd[2];
  if (pipe(pipefd) != 0) return 2;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    char* volatile p = malloc(100);
    free(p);
    exit(0);
  }
  close(pipefd[1]);
  char buf[4096];
  size_t total = 0;
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) > 0) {
    fwrite(buf, 1, (size_t)n, stdout);
    total += (size_t)n;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child wrote %zu bytes on stderr, exit %d\n", total, WEXITSTATUS(status));
  return 0;
}
