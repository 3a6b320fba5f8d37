// A program that uses libcurl and OpenSSL, tears them down before it exits (curl_global_cleanup,
// OpenSSL's own atexit cleanup, and with argv[1] = "cleanup" an explicit OPENSSL_cleanup), and
// leaks a string libcurl allocated: the report must symbolize a stripped libcurl frame without
// initialising libcurl/OpenSSL again (the pattern of curl and openssl themselves).
#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/ssl.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  curl_global_init(CURL_GLOBAL_DEFAULT);
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  SSL_CTX_free(ctx);
  CURL* easy = curl_easy_init();
  char* volatile escaped = curl_easy_escape(easy, "a b", 3);  // 32 bytes, never freed
  escaped = NULL;
  curl_easy_cleanup(easy);
  curl_global_cleanup();
  if (argc > 1 && strcmp(argv[1], "cleanup") == 0) OPENSSL_cleanup();
  puts("done");
  return 0;
}
