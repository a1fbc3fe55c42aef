// SPDX-License-Identifier: Apache-2.0
// A test model that keeps state, as an AOTInductor export with a buffer written in forward
// does (a KV cache, a running counter), on the CPU: the container ABI with PyTorch 2.11's
// constants functions (GetConstantType, ExtractConstantsMap, user-managed updates that may
// name only some constants). One float32 input x [1]; each run does
//     counter += x;  y = counter * scale + table[0]
// with the constants (float32, 64 bytes each as PyTorch pads CPU constants):
//     "scale"   parameter [1] = 2      (read-only)
//     "counter" buffer    [1] = 10     (written by every run: state)
//     "table"   buffer    [2] = {1, 3} (only read, but a package has no wrapper source to
//                                       prove it: slimcuda must treat it as state)
// Variants:
//   (default)                   the constants live in the library's own memory (as an
//                               export's embedded weights): one copy per loaded library
//   SLIMCUDA_TEST_ARCHIVE        no constants until given (package_constants_in_so=False):
//                               Run fails before a full update
//   SLIMCUDA_TEST_OPAQUE         no ExtractConstantsMap and no user-managed update: the state
//                               stays where slimcuda cannot reach it
//   SLIMCUDA_TEST_STATELESS      no state: all three are parameters and a run writes none,
//                               y = counter * scale + table[0] = 21 (for swapping weights)
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

#include "slimcuda/aoti_torch.h"

#define SHIM(name) SLIMCUDA_SHIM(aoti_torch_##name)
#define EXPORT extern "C" __attribute__((visibility("default")))

namespace {

constexpr size_t kCount = 3;
struct Info {
  const char* name;
  int32_t kind;  // PyTorch's ConstantType: 1 parameter, 2 buffer
  int64_t size;
};
#if defined(SLIMCUDA_TEST_STATELESS)
constexpr Info kInfo[kCount] = {{"scale", 1, 1}, {"counter", 1, 1}, {"table", 1, 2}};
#else
constexpr Info kInfo[kCount] = {{"scale", 1, 1}, {"counter", 2, 1}, {"table", 2, 2}};
#endif

// The library's own copy of the constants (16 floats = 64 bytes each).
[[maybe_unused]] float library_data[kCount][16] = {{2}, {10}, {1, 3}};

struct Container {
  AtenTensorHandle handles[kCount] = {};
  bool owned[kCount] = {};  // made by the container (deleted when replaced), or the caller's
  // The inactive set (PyTorch's secondary buffer): filled by a use_inactive update, made
  // active by SwapConstantBuffer, emptied by FreeInactiveConstantBuffer.
  AtenTensorHandle inactive[kCount] = {};
  bool inactive_owned[kCount] = {};
  void drop_inactive() {
    for (size_t i = 0; i < kCount; ++i) {
      if (inactive_owned[i]) SHIM(delete_tensor_object)(inactive[i]);
      inactive[i] = nullptr;
      inactive_owned[i] = false;
    }
  }
  ~Container() {
    for (size_t i = 0; i < kCount; ++i) {
      if (owned[i]) SHIM(delete_tensor_object)(handles[i]);
    }
    drop_inactive();
  }
};

[[maybe_unused]] int index_of(const char* name) {  // unused by the opaque variant
  for (size_t i = 0; i < kCount; ++i) {
    if (name != nullptr && std::strcmp(name, kInfo[i].name) == 0) return static_cast<int>(i);
  }
  return -1;
}

float* data_of(AtenTensorHandle t) {
  void* p = nullptr;
  return t != nullptr && SHIM(get_data_ptr)(t, &p) == 0 ? static_cast<float*>(p) : nullptr;
}

}  // namespace

EXPORT int32_t AOTInductorModelContainerCreateWithDevice(void** container, size_t num_models, const char*,
                                                         const char*) {
  if (container == nullptr || num_models == 0) return 1;
  auto* c = new (std::nothrow) Container;
  if (c == nullptr) return 1;
#if !defined(SLIMCUDA_TEST_ARCHIVE)
  for (size_t i = 0; i < kCount; ++i) {
    const int64_t sizes[1] = {kInfo[i].size};
    if (SHIM(create_tensor_from_blob)(library_data[i], 1, sizes, nullptr, 0, SHIM(dtype_float32)(),
                                      SHIM(device_type_cpu)(), 0, &c->handles[i]) != 0) {
      delete c;
      return 1;
    }
    c->owned[i] = true;
  }
#endif
  *container = c;
  return 0;
}

EXPORT int32_t AOTInductorModelContainerDelete(void* container) {
  delete static_cast<Container*>(container);
  return 0;
}

EXPORT int32_t AOTInductorModelContainerGetNumInputs(void* c, size_t* n) { return c && n ? (*n = 1, 0) : 1; }
EXPORT int32_t AOTInductorModelContainerGetNumOutputs(void* c, size_t* n) { return c && n ? (*n = 1, 0) : 1; }
EXPORT int32_t AOTInductorModelContainerGetNumConstants(void* c, size_t* n) { return c && n ? (*n = kCount, 0) : 1; }
EXPORT int32_t AOTInductorModelContainerGetConstantName(void* c, size_t i, const char** out) {
  return c && out && i < kCount ? (*out = kInfo[i].name, 0) : 1;
}
EXPORT int32_t AOTInductorModelContainerGetConstantOriginalFQN(void* c, size_t i, const char** out) {
  return c && out && i < kCount ? (*out = kInfo[i].name, 0) : 1;
}
EXPORT int32_t AOTInductorModelContainerGetConstantFromFolded(void* c, size_t i, bool* out) {
  return c && out && i < kCount ? (*out = false, 0) : 1;
}
EXPORT int32_t AOTInductorModelContainerGetConstantType(void* c, size_t i, int32_t* out) {
  return c && out && i < kCount ? (*out = kInfo[i].kind, 0) : 1;
}
EXPORT int32_t AOTInductorModelContainerGetConstantDtype(void* c, size_t i, int32_t* out) {
  return c && out && i < kCount ? (*out = SHIM(dtype_float32)(), 0) : 1;
}
EXPORT int32_t AOTInductorModelContainerGetConstantDataSize(void* c, size_t i, size_t* out) {
  return c && out && i < kCount ? (*out = 64, 0) : 1;
}

#if !defined(SLIMCUDA_TEST_OPAQUE)
// As PyTorch 2.11: the container's own handles of its constants, keyed by FQN.
EXPORT int32_t AOTInductorModelContainerExtractConstantsMap(void* container, void* map, bool use_inactive) {
  auto* c = static_cast<Container*>(container);
  if (c == nullptr || map == nullptr || use_inactive) return 1;
  auto* m = static_cast<std::unordered_map<std::string, AtenTensorHandle>*>(map);
  for (size_t i = 0; i < kCount; ++i) {
    if (c->handles[i] != nullptr) (*m)[kInfo[i].name] = c->handles[i];
  }
  return 0;
}

struct Pair {  // AOTInductorConstantMapEntry
  const char* name;
  AtenTensorHandle handle;
};
// As PyTorch 2.11's user-managed update: validate_full_update demands every constant (a
// buffer may be left out), else the names given replace theirs and the rest stay. Into the
// inactive set, a buffer left out is the active one's (the state carries over a swap).
EXPORT int32_t AOTInductorModelContainerUpdateUserManagedConstantBufferPairs(void* container, const Pair* pairs,
                                                                             size_t n, bool use_inactive,
                                                                             bool validate_full_update) {
  auto* c = static_cast<Container*>(container);
  if (c == nullptr || (pairs == nullptr && n > 0)) return 1;
  bool given[kCount] = {};
  for (size_t i = 0; i < n; ++i) {
    const int k = index_of(pairs[i].name);
    if (k < 0 || data_of(pairs[i].handle) == nullptr) return 1;
    given[k] = true;
  }
  for (size_t k = 0; validate_full_update && k < kCount; ++k) {
    if (!given[k] && (!use_inactive || kInfo[k].kind != 2)) return 1;
  }
  if (use_inactive) {
    c->drop_inactive();
    for (size_t k = 0; k < kCount; ++k) {
      if (!given[k]) c->inactive[k] = c->handles[k];  // not owned by the inactive set
    }
    for (size_t i = 0; i < n; ++i) c->inactive[index_of(pairs[i].name)] = pairs[i].handle;
    return 0;
  }
  for (size_t i = 0; i < n; ++i) {
    const int k = index_of(pairs[i].name);
    if (c->owned[k]) SHIM(delete_tensor_object)(c->handles[k]);
    c->handles[k] = pairs[i].handle;
    c->owned[k] = false;
  }
  return 0;
}
EXPORT int32_t AOTInductorModelContainerSwapConstantBuffer(void* container) {
  auto* c = static_cast<Container*>(container);
  if (c == nullptr || c->inactive[0] == nullptr) return 1;
  for (size_t k = 0; k < kCount; ++k) {
    std::swap(c->handles[k], c->inactive[k]);
    std::swap(c->owned[k], c->inactive_owned[k]);
  }
  // A constant both sets share (a buffer carried over) stays owned by the active set only.
  for (size_t k = 0; k < kCount; ++k) {
    if (c->inactive[k] == c->handles[k]) {
      c->owned[k] = c->owned[k] || c->inactive_owned[k];
      c->inactive_owned[k] = false;
    }
  }
  return 0;
}

EXPORT int32_t AOTInductorModelContainerFreeInactiveConstantBuffer(void* container) {
  auto* c = static_cast<Container*>(container);
  if (c == nullptr) return 1;
  c->drop_inactive();
  return 0;
}
#endif

EXPORT int32_t AOTInductorModelContainerRun(void* container, AtenTensorHandle* in, size_t num_in, AtenTensorHandle* out,
                                            size_t num_out, void*, void*) {
  auto* c = static_cast<Container*>(container);
  if (c == nullptr || in == nullptr || out == nullptr || num_in != 1 || num_out != 1) return 1;
  float* x = data_of(in[0]);
  float* scale = data_of(c->handles[0]);
  float* counter = data_of(c->handles[1]);
  float* table = data_of(c->handles[2]);
  const bool ready = x != nullptr && scale != nullptr && counter != nullptr && table != nullptr;
  const float step = ready ? *x : 0;
  SHIM(delete_tensor_object)(in[0]);  // inputs are stolen, as in AOTInductor
  if (!ready) return 1;
#if !defined(SLIMCUDA_TEST_STATELESS)
  *counter += step;
#else
  (void)step;
#endif
  const int64_t sizes[1] = {1};
  AtenTensorHandle y = nullptr;
  if (SHIM(empty_strided)(1, sizes, nullptr, SHIM(dtype_float32)(), SHIM(device_type_cpu)(), 0, &y) != 0) return 1;
  *data_of(y) = *counter * *scale + table[0];
  out[0] = y;
  return 0;
}
