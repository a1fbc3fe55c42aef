// SPDX-License-Identifier: Apache-2.0
/* A C program that knows only the installed slimcuda (pkg-config slimcuda): checks the
 * caller-stream ABI and the copy contract's first check. tools/consumer/check.sh builds
 * and runs it in CI. Exit status 0 = all checks passed. */
#include <slimcuda/slimcuda.h>
#include <stdio.h>
#include <string.h>

static int failures = 0;

#define CHECK(cond)                                            \
  do {                                                         \
    if (!(cond)) {                                             \
      fprintf(stderr, "consumer.c:%d: %s\n", __LINE__, #cond); \
      failures++;                                              \
    }                                                          \
  } while (0)

int main(void) {
  void* stream = (void*)0x1234; /* a stand-in handle: stored, never dereferenced */
  void* got = NULL;
  int32_t is_set = -1;

  CHECK(slimcuda_caller_stream_get(&got, &is_set) == SLIMCUDA_OK && is_set == 0);
  CHECK(slimcuda_caller_stream_push(stream) == SLIMCUDA_OK);
  CHECK(slimcuda_caller_stream_get(&got, &is_set) == SLIMCUDA_OK && is_set == 1 && got == stream);
  CHECK(slimcuda_caller_stream_pop() == SLIMCUDA_OK);
  CHECK(slimcuda_caller_stream_get(&got, &is_set) == SLIMCUDA_OK && is_set == 0);
  CHECK(slimcuda_caller_stream_pop() == SLIMCUDA_ERROR_INVALID_STATE);

  char host[16] = {0};
  CHECK(slimcuda_copy_host_to_device(NULL, host, sizeof host, 0) == SLIMCUDA_ERROR_INVALID_ARGUMENT);
  CHECK(strstr(slimcuda_last_error_message(), "null dst") != NULL);
  CHECK(slimcuda_copy_device_to_host(host, NULL, 0, 0) == SLIMCUDA_ERROR_INVALID_ARGUMENT);

  int32_t devices = -1;
  CHECK(slimcuda_device_count(&devices) == SLIMCUDA_OK && devices >= 0);
  printf("consumer.c: %s (%d CUDA devices)\n", failures ? "FAILED" : "ok", devices);
  return failures ? 1 : 0;
}
