/* Starts heapkit's HTTP server from code (include/heapkit/http_server.h), linked against
 * libheapkit (no preload, no HEAPKIT_HTTP): prints "bound <host:port>", then what a second
 * call says ("second <rc> <message>"), then "ready", holds 8 MiB from KeepFromApi and waits
 * for its standard input to close. */
#include <heapkit/http_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void* g_kept[8];

__attribute__((noinline)) static void KeepFromApi(void) {
  for (int i = 0; i < 8; ++i) {
    g_kept[i] = malloc(1 << 20);
    memset(g_kept[i], 1, 64);
  }
}

int main(int argc, char** argv) {
  char message[128];
  if (!HeapkitStartHttpServer(argc > 1 ? argv[1] : ":0", message, sizeof message)) {
    printf("failed %s\n", message);
    return 1;
  }
  printf("bound %s\n", message);
  const int again = HeapkitStartHttpServer(":0", message, sizeof message);
  printf("second %d %s\n", again, message);
  KeepFromApi();
  printf("ready\n");
  fflush(stdout);
  char c;
  while (read(0, &c, 1) > 0) {
  }
  return 0;
}
