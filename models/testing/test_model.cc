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
//   SLIMCUDA_TEST_MISSING_SHIMS    calls two aoti_torch_* shims slimcuda does not define, a
//                                  made-up SLEEF function and a real one
//   SLIMCUDA_TEST_PROXY_CALL       returns what extern-kernel node 0 of the proxy executor
//                                  makes of x (aoti_torch_proxy_executor_call_function, as
//                                  generated code calls an op without a C shim): a .pt2 of
//                                  it must carry the extern-kernel nodes
//   SLIMCUDA_TEST_COUNT_INSTANCES  a container of num_models instances that fails a Run
//                                  when more than num_models are in flight at once (where
//                                  AOTInductor's own container would make the caller wait),
//                                  sleeps x microseconds, and returns y = how many Runs
//                                  were in flight when it started (itself included)
//   SLIMCUDA_TEST_WEIGHTS          constants kept outside the library, as an export with
//                                  package_constants_in_so=False has them: "layer_w"
//                                  (FQN layer.w, float32 [2, 3], 64 bytes), "layer_b"
//                                  (layer.b, float32 [1], 64 bytes: PyTorch pads CPU
//                                  constants) and a folded "folded_c"; Run fails until
//                                  they are given, then y = x + sum_k w.flat[k] * (k + 1) + b
//                                  (w read through its strides and storage offset). With
//   SLIMCUDA_TEST_WEIGHTS_PAIRS    ...UpdateUserManagedConstantBufferPairs (the tensors are
//                                  used where they are), or
//   SLIMCUDA_TEST_WEIGHTS_COPY     only ...UpdateConstantBuffer (copied into the library's
//                                  own memory, as AOTInductor's container does)
// (-z nodelete, the other kind of library that stays loaded, is a link option: BUILD.bazel.)
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "slimcuda/aoti_torch.h"

#define SHIM(name) SLIMCUDA_SHIM(aoti_torch_##name)

#ifndef SLIMCUDA_TEST_VALUE
#error "SLIMCUDA_TEST_VALUE must be defined"
#endif

namespace {

struct Container {
  size_t num_models = 0;
  std::atomic<size_t> in_flight{0};
#if defined(SLIMCUDA_TEST_WEIGHTS)
  AtenTensorHandle constants[2] = {nullptr, nullptr};  // layer_w, layer_b (user-managed: not ours)
  float copied[2][16] = {};                            // the copy path's own memory
  bool have_constants = false;
#endif
};

#if defined(SLIMCUDA_TEST_WEIGHTS)
struct ConstantInfo {
  const char* name;
  const char* fqn;
  bool folded;
  size_t data_size;
  int64_t dim;
  int64_t sizes[2];
};
constexpr ConstantInfo kConstants[3] = {
    {"layer_w", "layer.w", false, 64, 2, {2, 3}},
    {"layer_b", "layer.b", false, 64, 1, {1, 0}},
    {"folded_c", "folded.c", true, 4, 1, {1, 0}},
};

// A constant tensor as the model expects it: float32 on the CPU, its sizes.
bool constant_fits(int k, AtenTensorHandle t) {
  int32_t dtype = -1, device = -1;
  int64_t dim = -1;
  int64_t* sizes = nullptr;
  if (t == nullptr || SHIM(get_dtype)(t, &dtype) != 0 || SHIM(get_device_type)(t, &device) != 0 ||
      SHIM(get_dim)(t, &dim) != 0 || SHIM(get_sizes)(t, &sizes) != 0) {
    return false;
  }
  if (dtype != SHIM(dtype_float32)() || device != SHIM(device_type_cpu)() || dim != kConstants[k].dim) return false;
  for (int64_t d = 0; d < dim; ++d) {
    if (sizes[d] != kConstants[k].sizes[d]) return false;
  }
  return true;
}

// Takes name -> tensor pairs: every name known, both constants there (validate_full_update).
template <typename Each>
int32_t take_constants(Container* c, size_t n, Each&& each, bool copy) {
  AtenTensorHandle got[2] = {nullptr, nullptr};
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    AtenTensorHandle t = nullptr;
    each(i, &name, &t);
    int k = -1;
    for (int j = 0; j < 2; ++j) {
      if (name != nullptr && std::strcmp(name, kConstants[j].name) == 0) k = j;
    }
    if (k < 0 || !constant_fits(k, t)) return 1;
    got[k] = t;
  }
  if (got[0] == nullptr || got[1] == nullptr) return 1;
  for (int k = 0; k < 2; ++k) {
    if (copy) {
      void* p = nullptr;
      int64_t bytes = 0;
      if (SHIM(get_data_ptr)(got[k], &p) != 0 || SHIM(get_storage_size)(got[k], &bytes) != 0) return 1;
      if (bytes < 0 || static_cast<size_t>(bytes) > sizeof c->copied[k]) return 1;
      std::memcpy(c->copied[k], p, static_cast<size_t>(bytes));
    } else {
      c->constants[k] = got[k];
    }
  }
  c->have_constants = true;
  return 0;
}

// w.flat[k] * (k + 1) summed, plus b: reads w through its strides (and, with user-managed
// constants, the storage offset that data_ptr already includes).
float weights_term(Container* c) {
  float w[6], b = 0;
#if defined(SLIMCUDA_TEST_WEIGHTS_COPY)
  std::memcpy(w, c->copied[0], sizeof w);
  b = c->copied[1][0];
#else
  void* pw = nullptr;
  void* pb = nullptr;
  int64_t* strides = nullptr;
  if (SHIM(get_data_ptr)(c->constants[0], &pw) != 0 || SHIM(get_data_ptr)(c->constants[1], &pb) != 0 ||
      SHIM(get_strides)(c->constants[0], &strides) != 0) {
    return -1e30f;
  }
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) w[i * 3 + j] = static_cast<const float*>(pw)[i * strides[0] + j * strides[1]];
  }
  b = *static_cast<const float*>(pb);
#endif
  float sum = b;
  for (int k = 0; k < 6; ++k) sum += w[k] * static_cast<float>(k + 1);
  return sum;
}
#endif

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

#if defined(SLIMCUDA_TEST_MISSING_SHIMS)
// Two shims no slimcuda defines, as an export from a newer PyTorch would want, and a SLEEF
// function no SLEEF has beside one that libslimcuda's libsleef defines.
extern "C" AOTITorchError SHIM(cpu_made_up_op)(AtenTensorHandle self, AtenTensorHandle* ret0);
extern "C" AOTITorchError SHIM(made_up_helper)(int32_t value);
extern "C" float Sleef_madeupf_u10(float x);
extern "C" float Sleef_expf_u10(float x);
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

#if defined(SLIMCUDA_TEST_WEIGHTS)
#define EXPORT __attribute__((visibility("default")))
EXPORT int32_t AOTInductorModelContainerGetNumConstants(void* container, size_t* n) {
  if (container == nullptr || n == nullptr) return 1;
  *n = 3;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetConstantName(void* container, size_t i, const char** out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = kConstants[i].name;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetConstantOriginalFQN(void* container, size_t i, const char** out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = kConstants[i].fqn;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetConstantFromFolded(void* container, size_t i, bool* out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = kConstants[i].folded;
  return 0;
}
// As PyTorch 2.11 says of weights: parameters (1), the folded one folded (4).
EXPORT int32_t AOTInductorModelContainerGetConstantType(void* container, size_t i, int32_t* out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = kConstants[i].folded ? 4 : 1;
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetConstantDtype(void* container, size_t i, int32_t* out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = SHIM(dtype_float32)();
  return 0;
}
EXPORT int32_t AOTInductorModelContainerGetConstantDataSize(void* container, size_t i, size_t* out) {
  if (container == nullptr || i >= 3 || out == nullptr) return 1;
  *out = kConstants[i].data_size;
  return 0;
}
struct Pair {  // AOTInductorConstantMapEntry
  const char* name;
  AtenTensorHandle handle;
};
#if defined(SLIMCUDA_TEST_WEIGHTS_PAIRS)
EXPORT int32_t AOTInductorModelContainerUpdateUserManagedConstantBufferPairs(void* container, const Pair* pairs,
                                                                             size_t n, bool use_inactive,
                                                                             bool validate_full_update) {
  if (container == nullptr || (pairs == nullptr && n > 0) || use_inactive || !validate_full_update) return 1;
  return take_constants(
      static_cast<Container*>(container), n,
      [&](size_t i, const char** name, AtenTensorHandle* t) {
        *name = pairs[i].name;
        *t = pairs[i].handle;
      },
      false);
}
#endif
#if defined(SLIMCUDA_TEST_WEIGHTS_COPY)
EXPORT int32_t AOTInductorModelContainerUpdateConstantBuffer(void* container, void* map, bool use_inactive,
                                                             bool validate_full_update) {
  if (container == nullptr || map == nullptr || use_inactive || !validate_full_update) return 1;
  auto* m = static_cast<std::unordered_map<std::string, AtenTensorHandle>*>(map);
  std::vector<std::pair<std::string, AtenTensorHandle>> items(m->begin(), m->end());
  return take_constants(
      static_cast<Container*>(container), items.size(),
      [&](size_t i, const char** name, AtenTensorHandle* t) {
        *name = items[i].first.c_str();
        *t = items[i].second;
      },
      true);
}
#endif
#undef EXPORT
#endif

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
#elif defined(SLIMCUDA_TEST_WEIGHTS)
  auto* c = static_cast<Container*>(container);
  if (!c->have_constants) {  // AOTInductor's own container would read null constants here
    SHIM(delete_tensor_object)(in[0]);
    return 1;
  }
  const float result = *static_cast<const float*>(x) + weights_term(c);
#else
  const float result = *static_cast<const float*>(x) + static_cast<float>(SLIMCUDA_TEST_VALUE);
#endif
#if defined(SLIMCUDA_TEST_PROXY_CALL)
  (void)result;
  AtenTensorHandle made = nullptr;
  if (SHIM(new_uninitialized_tensor)(&made) != 0) return 1;
  AtenTensorHandle args[2] = {in[0], made};
  try {  // a failed call throws, as PyTorch's does; AOTInductor's Run catches it the same way
    (void)SHIM(proxy_executor_call_function)(static_cast<AOTIProxyExecutorHandle>(proxy_executor), 0, 0, nullptr, 2,
                                             args);
  } catch (const std::exception&) {
    SHIM(delete_tensor_object)(made);
    SHIM(delete_tensor_object)(in[0]);
    return 1;
  }
  SHIM(delete_tensor_object)(in[0]);
  out[0] = made;
  return 0;
#endif
  SHIM(delete_tensor_object)(in[0]);  // inputs are stolen, as in AOTInductor
#if defined(SLIMCUDA_TEST_UNIQUE_SYMBOL)
  ++unique_counter();
#endif
#if defined(SLIMCUDA_TEST_UNDEFINED_SYMBOL)
  slimcuda_test_function_no_one_defines();
#endif
#if defined(SLIMCUDA_TEST_MISSING_SHIMS)
  if (SHIM(made_up_helper)(1) != 0 || SHIM(cpu_made_up_op)(nullptr, nullptr) != 0) return 1;
  if (Sleef_madeupf_u10(Sleef_expf_u10(0.0f)) != 1.0f) return 1;
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
