// SPDX-License-Identifier: Apache-2.0
// The demo model: the AOTInductor container ABI implemented by hand, calling the same
// aoti_torch_* shims that AOTInductor-generated code calls (through SLIMCUDA_SHIM, so the
// prefixed build works too). demo_cpu.cc or demo_cuda.cu supplies forward().
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

#include "models/demo/demo_weights.h"
#include "slimcuda/aoti_torch.h"

#define SHIM(name) SLIMCUDA_SHIM(aoti_torch_##name)

namespace {

using namespace slimcuda_demo;

struct Container {
  int32_t device_type = 0;  // aoti_torch_device_type_cpu() or _cuda()
  int32_t device_index = 0;
  AtenTensorHandle weights[4] = {};  // W1, b1, W2, b2
  ~Container() {
    for (AtenTensorHandle w : weights) {
      if (w != nullptr) SHIM(delete_tensor_object)(w);
    }
  }
};

// Deletes a handle at scope end (the container owns the inputs it is given).
struct Owned {
  AtenTensorHandle h = nullptr;
  ~Owned() {
    if (h != nullptr) SHIM(delete_tensor_object)(h);
  }
};

// Makes a weight tensor on the container's device holding `values`.
AOTITorchError make_weight(const Container& c, std::vector<float> values, std::vector<int64_t> sizes,
                           AtenTensorHandle* out) {
  AOTITorchError rc = SHIM(empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr,
                                          SHIM(dtype_float32)(), c.device_type, c.device_index, out);
  if (rc != 0) return rc;
  AtenTensorHandle host = nullptr;
  rc = SHIM(create_tensor_from_blob)(values.data(), static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, 0,
                                     SHIM(dtype_float32)(), SHIM(device_type_cpu)(), 0, &host);
  if (rc != 0) return rc;
  rc = SHIM(copy_)(*out, host, 0);
  SHIM(delete_tensor_object)(host);
  return rc;
}

void* data(AtenTensorHandle t) {
  void* p = nullptr;
  SHIM(get_data_ptr)(t, &p);
  return p;
}

}  // namespace

extern "C" {

int32_t AOTInductorModelContainerCreateWithDevice(void** container_handle, size_t num_models, const char* device_str,
                                                  const char* cubin_dir) {
  (void)cubin_dir;
  if (container_handle == nullptr || num_models == 0 || device_str == nullptr) return 1;
  auto* c = new (std::nothrow) Container;
  if (c == nullptr) return 1;
  if (std::strncmp(device_str, "cuda", 4) == 0) {
    c->device_type = SHIM(device_type_cuda)();
    c->device_index = device_str[4] == ':' ? static_cast<int32_t>(std::strtol(device_str + 5, nullptr, 10)) : -1;
  } else if (std::strcmp(device_str, "cpu") == 0) {
    c->device_type = SHIM(device_type_cpu)();
  } else {
    delete c;
    return 1;
  }
  std::vector<float> v1, vb1, v2, vb2;
  for (int i = 0; i < kIn; ++i)
    for (int j = 0; j < kHidden; ++j) v1.push_back(w1(i, j));
  for (int j = 0; j < kHidden; ++j) vb1.push_back(b1(j));
  for (int i = 0; i < kHidden; ++i)
    for (int j = 0; j < kOut; ++j) v2.push_back(w2(i, j));
  for (int j = 0; j < kOut; ++j) vb2.push_back(b2(j));
  if (make_weight(*c, v1, {kIn, kHidden}, &c->weights[0]) != 0 ||
      make_weight(*c, vb1, {kHidden}, &c->weights[1]) != 0 ||
      make_weight(*c, v2, {kHidden, kOut}, &c->weights[2]) != 0 || make_weight(*c, vb2, {kOut}, &c->weights[3]) != 0) {
    delete c;
    return 1;
  }
  *container_handle = c;
  return 0;
}

int32_t AOTInductorModelContainerDelete(void* container_handle) {
  delete static_cast<Container*>(container_handle);
  return 0;
}

int32_t AOTInductorModelContainerGetNumInputs(void* container_handle, size_t* n) {
  if (container_handle == nullptr || n == nullptr) return 1;
  *n = 1;
  return 0;
}

int32_t AOTInductorModelContainerGetNumOutputs(void* container_handle, size_t* n) {
  if (container_handle == nullptr || n == nullptr) return 1;
  *n = 1;
  return 0;
}

int32_t AOTInductorModelContainerRun(void* container_handle, AtenTensorHandle* input_handles, size_t num_inputs,
                                     AtenTensorHandle* output_handles, size_t num_outputs, void* stream,
                                     void* proxy_executor) {
  (void)proxy_executor;
  auto* c = static_cast<Container*>(container_handle);
  if (c == nullptr || input_handles == nullptr || output_handles == nullptr || num_inputs != 1 || num_outputs != 1) {
    return 1;
  }
  Owned input{input_handles[0]};  // stolen, as in AOTInductor
  // Check what we were given, as generated code does.
  int32_t dtype = -1, device_type = -1;
  int64_t dim = 0;
  int64_t* sizes = nullptr;
  if (SHIM(get_dtype)(input.h, &dtype) != 0 || dtype != SHIM(dtype_float32)() ||
      SHIM(get_device_type)(input.h, &device_type) != 0 || device_type != c->device_type ||
      SHIM(get_dim)(input.h, &dim) != 0 || dim != 2 || SHIM(get_sizes)(input.h, &sizes) != 0 || sizes[1] != kIn ||
      sizes[0] > kMaxBatch) {
    return 1;
  }
  const int64_t batch = sizes[0];
  // On CUDA everything below runs on the stream we were given.
  CUDAStreamGuardHandle guard = nullptr;
  if (c->device_type == SHIM(device_type_cuda)() &&
      SHIM(create_cuda_stream_guard)(stream, c->device_index, &guard) != 0) {
    return 1;
  }
  // A non-contiguous input is copied first, like AOTInductor's aligned copies.
  bool contiguous = false;
  Owned packed;
  AtenTensorHandle x = input.h;
  if (SHIM(is_contiguous)(input.h, &contiguous) == 0 && !contiguous) {
    if (SHIM(clone)(input.h, &packed.h) != 0) return 1;
    x = packed.h;
  }
  const int64_t hidden_sizes[2] = {batch, kHidden}, out_sizes[2] = {batch, kOut};
  Owned hidden;
  AtenTensorHandle y = nullptr;
  int32_t rc = SHIM(empty_strided)(2, hidden_sizes, nullptr, dtype, c->device_type, c->device_index, &hidden.h);
  if (rc == 0) rc = SHIM(empty_strided)(2, out_sizes, nullptr, dtype, c->device_type, c->device_index, &y);
  if (rc == 0) {
    rc = slimcuda_demo::forward(
        static_cast<const float*>(data(x)), static_cast<int>(batch), static_cast<const float*>(data(c->weights[0])),
        static_cast<const float*>(data(c->weights[1])), static_cast<const float*>(data(c->weights[2])),
        static_cast<const float*>(data(c->weights[3])), static_cast<float*>(data(hidden.h)),
        static_cast<float*>(data(y)), stream);
  }
  if (guard != nullptr) SHIM(delete_cuda_stream_guard)(guard);
  if (rc != 0) {
    if (y != nullptr) SHIM(delete_tensor_object)(y);
    return rc;
  }
  output_handles[0] = y;  // stolen by the caller
  return 0;
}

// What slimcuda's CUDA graphs capture through (AOTInductor's takes no instance: the demo has
// none either).
int32_t AOTInductorModelContainerRunSingleThreaded(void* container_handle, AtenTensorHandle* input_handles,
                                                   size_t num_inputs, AtenTensorHandle* output_handles,
                                                   size_t num_outputs, void* stream, void* proxy_executor) {
  return AOTInductorModelContainerRun(container_handle, input_handles, num_inputs, output_handles, num_outputs, stream,
                                      proxy_executor);
}

}  // extern "C"
