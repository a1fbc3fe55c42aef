// SPDX-License-Identifier: Apache-2.0
// The memory shims' argument checks and ownership rules (the fixture suite covers their
// results): every null or malformed argument is an error with a message, never a crash.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "csrc/memory/pinned_pool.h"
#include "csrc/tensor/handle_adoption.h"
#include "csrc/testing/fixtures.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

constexpr int32_t kF32 = 6, kCPU = 0, kCUDA = 1;

bool message_has(const char* text) { return std::string(last_error_message()).find(text) != std::string::npos; }

AtenTensorHandle cpu_tensor(std::vector<int64_t> sizes) {
  AtenTensorHandle t = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(static_cast<int64_t>(sizes.size()), sizes.data(), nullptr, kF32,
                                                    kCPU, 0, &t),
            0);
  return t;
}

TEST(MemoryShims, EmptyStridedNullAndNegativeArguments) {
  const int64_t sizes[2] = {2, 3};
  AtenTensorHandle t = reinterpret_cast<AtenTensorHandle>(0x1);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, sizes, nullptr, kF32, kCPU, 0, nullptr),
            code_of(Error::InvalidArgument));
  EXPECT_TRUE(message_has("null ret_new_tensor"));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(-1, sizes, nullptr, kF32, kCPU, 0, &t),
            code_of(Error::InvalidArgument));
  EXPECT_TRUE(message_has("ndim -1 < 0"));
  EXPECT_EQ(t, nullptr) << "a failed call clears the output";
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, nullptr, nullptr, kF32, kCPU, 0, &t),
            code_of(Error::InvalidArgument));
  EXPECT_TRUE(message_has("null sizes with ndim 2"));
  // ndim 0 needs no sizes: a scalar.
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(0, nullptr, nullptr, kF32, kCPU, 0, &t), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(2, sizes, nullptr, kF32, kCPU, 0, nullptr),
            code_of(Error::InvalidArgument));
}

TEST(MemoryShims, FromBlobBorrowsAndChecks) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  const int64_t sizes[1] = {4};
  AtenTensorHandle t = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(data, 1, sizes, nullptr, 2, kF32, kCPU, 0, &t), 0);
  void* p = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &p), 0);
  EXPECT_EQ(p, data + 2) << "data is the storage start; the offset applies";
  int64_t storage = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_size)(t, &storage), 0);
  EXPECT_EQ(storage, 24);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
  EXPECT_EQ(data[5], 5.0f) << "borrowed memory is untouched and not freed";

  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(nullptr, 1, sizes, nullptr, 0, kF32, kCPU, 0, &t),
            code_of(Error::InvalidArgument));
  EXPECT_TRUE(message_has("null data"));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(data, 1, sizes, nullptr, 0, kF32, kCPU, 0, nullptr),
            code_of(Error::InvalidArgument));
  // v2: strided layout only, no opaque metadata.
  const uint8_t meta[4] = {1, 2, 3, 4};
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob_v2)(data, 1, sizes, nullptr, 0, kF32, kCPU, 0, &t, 0,
                                                                 nullptr, 0),
            0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob_v2)(data, 1, sizes, nullptr, 0, kF32, kCPU, 0, &t, 1,
                                                                 nullptr, 0),
            code_of(Error::NotSupported));
  EXPECT_EQ(
      SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob_v2)(data, 1, sizes, nullptr, 0, kF32, kCPU, 0, &t, 0, meta, 4),
      code_of(Error::NotSupported));
}

TEST(MemoryShims, HandlesShareStorage) {
  AtenTensorHandle a = cpu_tensor({4});
  AtenTensorHandle b = nullptr, c = nullptr, v = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(a, &b), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_assign_tensors_out)(a, &c), 0);
  const int64_t two = 2, one = 1;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_as_strided)(a, &two, &one, &v), 0);
  void *pa = nullptr, *pb = nullptr, *pc = nullptr, *pv = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(a, &pa), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(a), 0);  // the others keep the storage alive
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(b, &pb), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(c, &pc), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(v, &pv), 0);
  EXPECT_TRUE(pa == pb && pb == pc && pc == pv);
  static_cast<float*>(pb)[3] = 42.0f;  // still valid memory (ASan would catch a use-after-free)
  // assign_tensors makes dst the same view as src.
  AtenTensorHandle d = cpu_tensor({7});
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_assign_tensors)(v, d), 0);
  int64_t numel = 0;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_numel)(d, &numel), 0);
  EXPECT_EQ(numel, 2);
  for (AtenTensorHandle h : {b, c, v, d}) EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(nullptr, &b), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_assign_tensors)(nullptr, d), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_assign_tensors_out)(d, nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(nullptr), code_of(Error::InvalidArgument));
}

// A model container's copy of a lent constant (new_tensor_handle during a hand-over) is
// slimcuda's to delete: PyTorch 2.11's containers never delete it, 2.15's delete it when
// they are destroyed; either way it is freed once, when slimcuda drops it.
TEST(MemoryShims, AdoptedHandlesAreFreedOnceWhoeverDeletesThem) {
  AtenTensorHandle lent = cpu_tensor({4});
  AtenTensorHandle copy = nullptr;
  std::vector<std::unique_ptr<SlimTensor>> adopted;
  {
    HandleAdoption adoption({reinterpret_cast<const SlimTensor*>(lent)});
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(lent, &copy), 0);
    adopted = adoption.take();
  }
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(reinterpret_cast<AtenTensorHandle>(adopted[0].get()), copy);
  EXPECT_TRUE(adopted[0]->adopted());
  // What a 2.15 container does at destruction: the handle stays valid for slimcuda.
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(copy), 0);
  void* p = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(copy, &p), 0);
  EXPECT_NE(p, nullptr);
  // A copy made of the adopted handle outside a hand-over is an ordinary handle.
  AtenTensorHandle again = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_new_tensor_handle)(copy, &again), 0);
  EXPECT_FALSE(reinterpret_cast<SlimTensor*>(again)->adopted());
  SlimTensor assigned = *reinterpret_cast<SlimTensor*>(again);
  assigned.assign(*adopted[0]);
  EXPECT_FALSE(assigned.adopted()) << "assigning a view does not adopt the handle";
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(again), 0);
  adopted.clear();  // the one free of `copy`
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(lent), 0);
}

// Inductor re-views views (a slice of a buffer at an offset, viewed again): the offset of
// _reinterpret_tensor adds to self's, as in PyTorch. The zoo's LSTM read the wrong rows
// while it replaced it.
TEST(MemoryShims, ReinterpretAddsToTheViewsOffset) {
  AtenTensorHandle a = cpu_tensor({16});
  float* base = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(a, reinterpret_cast<void**>(&base)), 0);
  for (int i = 0; i < 16; ++i) base[i] = static_cast<float>(i);
  const int64_t four = 4, one = 1, two = 2;
  AtenTensorHandle v = nullptr, w = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(a, 1, &four, &one, 3, &v), 0);
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(v, 1, &two, &one, 2, &w), 0);
  int64_t offset = -1;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_storage_offset)(w, &offset), 0);
  EXPECT_EQ(offset, 5);
  float* p = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(w, reinterpret_cast<void**>(&p)), 0);
  EXPECT_EQ(p[0], 5.0f);
  EXPECT_EQ(p[1], 6.0f);
  // Past the storage from the view's offset: refused, though it would fit from offset 0.
  AtenTensorHandle bad = nullptr;
  const int64_t ten = 10;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(v, 1, &ten, &one, 4, &bad), code_of(Error::InvalidArgument));
  EXPECT_EQ(bad, nullptr);
  const int64_t huge = INT64_MAX;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(v, 1, &one, &one, huge, &bad),
            code_of(Error::InvalidArgument));
  for (AtenTensorHandle h : {a, v, w}) EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(h), 0);
}

TEST(MemoryShims, ViewAndCloneArgumentChecks) {
  AtenTensorHandle a = cpu_tensor({2, 3});
  AtenTensorHandle out = nullptr;
  const int64_t sizes[2] = {3, 2}, strides[2] = {1, 3};
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(nullptr, 2, sizes, strides, 0, &out),
            code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(a, 2, sizes, strides, 0, nullptr),
            code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch__reinterpret_tensor)(a, -3, sizes, strides, 0, &out),
            code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_as_strided)(a, sizes, nullptr, &out), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_as_strided)(nullptr, sizes, strides, &out), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_clone)(nullptr, &out), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_clone)(a, nullptr), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_clone_preserve_strides)(nullptr, &out), code_of(Error::InvalidArgument));
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(a, nullptr, 0), code_of(Error::InvalidArgument));
  EXPECT_TRUE(message_has("null src"));
  EXPECT_EQ(out, nullptr);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(a), 0);
}

// Pinned memory is really page-locked: the CUDA runtime reports it as host-registered.
TEST(MemoryShims, PinnedIsPageLocked) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const int64_t n = 1 << 20;
  AtenTensorHandle t = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(1, &n, nullptr, 0, kCPU, 0, &t), 0) << last_error_message();
  void* p = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &p), 0);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeHost);
  // A plain CPU tensor is not.
  AtenTensorHandle plain = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &n, nullptr, 0, kCPU, 0, &plain), 0);
  void* q = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(plain, &q), 0);
  ASSERT_EQ(cudaPointerGetAttributes(&attr, q), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(plain), 0);
}

// Pinned tensors come from the cached pinned pool: a freed block is reused for the next
// pinned tensor of its size, the statistics count it, and they return to the start.
TEST(MemoryShims, PinnedPoolReusesBlocksAndCounts) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  pinned_empty_cache();
  const PoolStats start = pinned_memory_stats();
  PoolStats s;
  const int64_t n = 3 * 1024 * 1024 + 100;  // bytes (uint8)
  void* first = nullptr;
  for (int round = 0; round < 3; ++round) {
    AtenTensorHandle t = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided_pinned)(1, &n, nullptr, 0, kCPU, 0, &t), 0)
        << last_error_message();
    void* p = nullptr;
    ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &p), 0);
    if (round == 0) first = p;
    EXPECT_EQ(p, first) << "round " << round << ": the freed pinned block was not reused";
    s = pinned_memory_stats();
    EXPECT_GE(s.allocated_bytes, start.allocated_bytes + static_cast<uint64_t>(n));
    EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
  }
  s = pinned_memory_stats();
  EXPECT_EQ(s.allocated_bytes, start.allocated_bytes);
  EXPECT_EQ(s.allocations - start.allocations, 3u);
  EXPECT_EQ(s.frees - start.frees, 3u);
  EXPECT_EQ(s.cache_hits - start.cache_hits, 2u);
  EXPECT_EQ(s.cache_misses - start.cache_misses, 1u);
  pinned_empty_cache();
  s = pinned_memory_stats();
  EXPECT_EQ(s.reserved_bytes, start.reserved_bytes);
}

// CUDA memory from empty_strided is device memory of the requested device.
TEST(MemoryShims, CudaTensorIsDeviceMemory) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  const int64_t sizes[2] = {64, 64};
  AtenTensorHandle t = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(2, sizes, nullptr, kF32, kCUDA, 0, &t), 0);
  void* p = nullptr;
  ASSERT_EQ(SLIMCUDA_SHIM(aoti_torch_get_data_ptr)(t, &p), 0);
  cudaPointerAttributes attr{};
  ASSERT_EQ(cudaPointerGetAttributes(&attr, p), cudaSuccess);
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 0);
  int32_t index = -5;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_get_device_index)(t, &index), 0);
  EXPECT_EQ(index, 0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(t), 0);
}

}  // namespace
}  // namespace slimcuda::testing
