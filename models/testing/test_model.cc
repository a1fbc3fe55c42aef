// SPDX-License-Identifier: Apache-2.0
// Test models for the loader: the smallest AOTInductor container ABI (one float32 input x
// of shape [1], one output y = x + kValue), built in variants that differ in what the
// loader must cope with. Each variant is its own library with its own answer, so a test
// can tell which library really ran.
//
//   SLIMCUDA_TEST_VALUE            the constant added (distinct per package)
//   SLIMCUDA_TEST_UNIQUE_SYMBOL    an STB_GNU_UNIQUE symbol (an inline function's static
//                                  local, g++'s default): the loader can never unload it
//   SLIMCUDA_TEST_STATIC_OUTPUT    y borrows the library's own static memory
//   SLIMCUDA_TEST_NULL_CONTAINER   ...CreateWithDevice returns 0 and no container
//   SLIMCUDA_TEST_CONSTRUCTOR_FILE an ELF constructor writes $SLIMCUDA_TEST_CONSTRUCTOR_FILE
//   SLIMCUDA_TEST_UNDEFINED_SYMBOL a well-formed library the loader refuses (a symbol no
//                                  process defines, resolved at load time: RTLD_NOW)
//   SLIMCUDA_TEST_COUNT_INSTANCES  a container of num_models instances that fails a Run
//                                  when more than num_models are in flight at once (where
//                                  AOTInductor's own container would make the caller wait),
//                                  sleeps x microseconds, and returns y = how many Runs
//                                  were in flight when it started (itself included)
// (-z nodelete, the other kind of library that stays loaded, is a link option: BUILD.bazel.)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <thread>

#include "slimcuda/aoti_torch.h"

#define SHIM(name) SLIMCUDA_SHIM(aoti_torch_##name)

#ifndef SLIMCUDA_TEST_VALUE
#error "SLIMCUDA_TEST_VALUE must be defined"
#endif

namespace {

struct Container {
  size_t num_models = 0;
  std::atomic<size_t> in_flight{0};
};

#if defined(SLIMCUDA_TEST_STATIC_OUTPUT)
float static_output[1];
#endif

}  // namespace

#if defined(SLIMCUDA_TEST_UNIQUE_SYMBOL)
// Exported with default visibility; g++ marks the static local STB_GNU_UNIQUE.
__attribute__((visibility("default"))) inline int& unique_counter() {
  static int counter = 0;
  return counter;
}
#endif

#if defined(SLIMCUDA_TEST_UNDEFINED_SYMBOL)
extern "C" void slimcuda_test_function_no_one_defines();
#endif

#if defined(SLIMCUDA_TEST_CONSTRUCTOR_FILE)
__attribute__((constructor)) static void write_marker() {
  if (const char* path = std::getenv("SLIMCUDA_TEST_CONSTRUCTOR_FILE")) {
    if (FILE* f = std::fopen(path, "w")) std::fclose(f);
  }
}
#endif

extern "C" {

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerCreateWithDevice(void** container,
                                                                                         size_t num_models,
                                                                                         const char* device,
                                                                                         const char* cubin_dir) {
  (void)device, (void)cubin_dir;
  if (container == nullptr || num_models == 0) return 1;
#if defined(SLIMCUDA_TEST_NULL_CONTAINER)
  *container = nullptr;
  return 0;
#else
  auto* c = new (std::nothrow) Container;
  if (c != nullptr) c->num_models = num_models;
  *container = c;
  return c == nullptr ? 1 : 0;
#endif
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerDelete(void* container) {
  delete static_cast<Container*>(container);
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetNumInputs(void* container, size_t* n) {
  if (container == nullptr || n == nullptr) return 1;
  *n = 1;
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerGetNumOutputs(void* container, size_t* n) {
  if (container == nullptr || n == nullptr) return 1;
  *n = 1;
  return 0;
}

__attribute__((visibility("default"))) int32_t AOTInductorModelContainerRun(void* container, AtenTensorHandle* in,
                                                                            size_t num_in, AtenTensorHandle* out,
                                                                            size_t num_out, void* stream,
                                                                            void* proxy_executor) {
  (void)stream, (void)proxy_executor;
  if (container == nullptr || in == nullptr || out == nullptr || num_in != 1 || num_out != 1) return 1;
  void* x = nullptr;
  if (SHIM(get_data_ptr)(in[0], &x) != 0) return 1;
#if defined(SLIMCUDA_TEST_COUNT_INSTANCES)
  auto* c = static_cast<Container*>(container);
  const size_t running = ++c->in_flight;
  if (running > c->num_models) {
    --c->in_flight;
    SHIM(delete_tensor_object)(in[0]);
    return 1;  // no free instance: the caller's instance slots did not hold
  }
  const float us = *static_cast<const float*>(x);
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(us < 1e6f ? us : 1e6f)));
  --c->in_flight;
  const float result = static_cast<float>(running);
#else
  const float result = *static_cast<const float*>(x) + static_cast<float>(SLIMCUDA_TEST_VALUE);
#endif
  SHIM(delete_tensor_object)(in[0]);  // inputs are stolen, as in AOTInductor
#if defined(SLIMCUDA_TEST_UNIQUE_SYMBOL)
  ++unique_counter();
#endif
#if defined(SLIMCUDA_TEST_UNDEFINED_SYMBOL)
  slimcuda_test_function_no_one_defines();
#endif
  const int64_t sizes[1] = {1};
#if defined(SLIMCUDA_TEST_STATIC_OUTPUT)
  static_output[0] = result;
  return SHIM(create_tensor_from_blob)(static_output, 1, sizes, nullptr, 0, SHIM(dtype_float32)(),
                                       SHIM(device_type_cpu)(), 0, &out[0]);
#else
  AtenTensorHandle y = nullptr;
  if (SHIM(empty_strided)(1, sizes, nullptr, SHIM(dtype_float32)(), SHIM(device_type_cpu)(), 0, &y) != 0) return 1;
  void* p = nullptr;
  if (SHIM(get_data_ptr)(y, &p) != 0) {
    SHIM(delete_tensor_object)(y);
    return 1;
  }
  *static_cast<float*>(p) = result;
  out[0] = y;
  return 0;
#endif
}

}  // extern "C"
