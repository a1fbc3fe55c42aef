// SPDX-License-Identifier: Apache-2.0
// model_consumer PACKAGE — a C++ program against the installed library (pkg-config): loads
// a model package with the C ABI, runs it under a caller-stream guard when there is a GPU
// (the CPU library otherwise) and prints the output's sum. Built by tools/consumer/check.sh.
#include <slimcuda/caller_stream.h>
#include <slimcuda/slimcuda.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: model_consumer PACKAGE\n");
    return 2;
  }
  slimcuda_model* model = nullptr;
  if (slimcuda_model_load_file(argv[1], /*device_type=*/-1, /*device_index=*/-1, &model) != SLIMCUDA_OK) {
    std::fprintf(stderr, "load: %s\n", slimcuda_last_error_message());
    return 1;
  }
  int32_t type = 0, index = 0;
  slimcuda_model_device(model, &type, &index);
  const int64_t sizes[2] = {4, 16};
  std::vector<float> x(64), y(32);
  for (int k = 0; k < 64; ++k) x[k] = static_cast<float>((k * 5) % 11 - 5) / 8.0f;
  slimcuda_tensor *in = nullptr, *out = nullptr;
  int rc = slimcuda_tensor_empty(2, sizes, nullptr, SLIMCUDA_FLOAT32, type, index, 0, &in);
  if (rc == SLIMCUDA_OK) rc = slimcuda_tensor_copy_from_host(in, x.data(), x.size() * 4, SLIMCUDA_FLOAT32);
  void* stream = nullptr;
  if (rc == SLIMCUDA_OK && type == SLIMCUDA_DEVICE_CUDA)
    rc = slimcuda_stream_create(SLIMCUDA_STREAM_NON_BLOCKING, index, &stream);
  if (rc == SLIMCUDA_OK) {
    // Everything in this scope runs on our stream: the model, then the copy back.
    slimcuda::CallerStreamGuard guard(static_cast<cudaStream_t>(stream));
    rc = slimcuda_model_run(model, &in, 1, &out, 1);
    if (rc == SLIMCUDA_OK) rc = slimcuda_tensor_copy_to_host(out, y.data(), y.size() * 4, SLIMCUDA_FLOAT32);
  }
  if (rc != SLIMCUDA_OK) std::fprintf(stderr, "run: %s\n", slimcuda_last_error_message());
  double sum = 0;
  for (float v : y) sum += v;
  std::printf("model_consumer: %s on %s, output sum %.8f\n", argv[1], type == 1 ? "cuda" : "cpu", sum);
  slimcuda_tensor_delete(in);
  slimcuda_tensor_delete(out);
  if (stream != nullptr) slimcuda_stream_destroy(stream);
  slimcuda_model_free(model);
  return rc == SLIMCUDA_OK ? 0 : 1;
}
