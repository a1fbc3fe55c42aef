// SPDX-License-Identifier: Apache-2.0
// The selection shims inside a model run that slimcuda's graph path captures
// (csrc/graph/graph_runner.h), through a container written here whose Run calls one shim as
// generated code does: nonzero cannot be captured (its size is read back), so with graphs
// ON the layout falls back to normal runs and is remembered, with STRICT the run fails with
// nonzero's reason; nonzero_static is captured and its replay gives its values. GPU only.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "csrc/graph/graph_runner.h"
#include "csrc/testing/fixtures.h"
#include "csrc/testing/test_stream.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/aoti_torch_ops.h"
#include "slimcuda/last_error.h"

namespace slimcuda::testing {
namespace {

// Which shim the container's Run calls.
std::atomic<bool> g_static_size{false};

int32_t create(void** container, size_t, const char*, const char*) {
  static int token = 0;
  *container = &token;
  return 0;
}

int32_t destroy(void*) { return 0; }

// AOTInductorModelContainerRunSingleThreaded of a one-op model: steals its input, returns
// the shim's new tensor, on `stream` (as generated code, under a stream guard).
int32_t run(void*, void** inputs, size_t num_inputs, void** outputs, size_t num_outputs, void* stream, void*) {
  if (num_inputs != 1 || num_outputs != 1) return 1;
  auto x = static_cast<AtenTensorHandle>(inputs[0]);
  CUDAStreamGuardHandle guard = nullptr;
  int32_t rc = SLIMCUDA_SHIM(aoti_torch_create_cuda_stream_guard)(stream, 0, &guard);
  AtenTensorHandle y = nullptr;
  if (rc == 0) {
    rc = g_static_size ? SLIMCUDA_SHIM(aoti_torch_cuda_nonzero_static)(x, 4, -1, &y)
                       : SLIMCUDA_SHIM(aoti_torch_cuda_nonzero)(x, &y);
  }
  if (guard != nullptr) (void)SLIMCUDA_SHIM(aoti_torch_delete_cuda_stream_guard)(guard);
  (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(x);
  outputs[0] = y;
  return rc;
}

graph::ContainerAbi abi() {
  graph::ContainerAbi a;
  a.create = create;
  a.destroy = destroy;
  a.run_single_threaded = run;
  a.device_str = "cuda:0";
  return a;
}

struct Deleter {
  void operator()(SlimTensor* t) const {
    (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(reinterpret_cast<AtenTensorHandle>(t));
  }
};
using Tensor = std::unique_ptr<SlimTensor, Deleter>;

AtenTensorHandle handle(const SlimTensor* t) { return reinterpret_cast<AtenTensorHandle>(const_cast<SlimTensor*>(t)); }

// A float32 [6] CUDA tensor holding 0, 1, 0, 2, 0, 3.
Tensor sparse_cuda() {
  std::vector<float> v = {0, 1, 0, 2, 0, 3};
  const int64_t n = 6, one = 1;
  AtenTensorHandle host = nullptr, dev = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_create_tensor_from_blob)(v.data(), 1, &n, &one, 0,
                                                              SLIMCUDA_SHIM(aoti_torch_dtype_float32)(),
                                                              SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &host),
            0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(1, &n, &one, SLIMCUDA_SHIM(aoti_torch_dtype_float32)(),
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cuda)(), 0, &dev),
            0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(dev, host, 0), 0) << last_error_message();
  (void)SLIMCUDA_SHIM(aoti_torch_delete_tensor_object)(host);
  return Tensor(reinterpret_cast<SlimTensor*>(dev));
}

std::vector<int64_t> host_longs(const SlimTensor& t) {
  AtenTensorHandle host = nullptr;
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_empty_strided)(t.dim(), t.sizes().data(), t.strides().data(),
                                                    SLIMCUDA_SHIM(aoti_torch_dtype_int64)(),
                                                    SLIMCUDA_SHIM(aoti_torch_device_type_cpu)(), 0, &host),
            0);
  EXPECT_EQ(SLIMCUDA_SHIM(aoti_torch_copy_)(host, handle(&t), 0), 0) << last_error_message();
  Tensor owner(reinterpret_cast<SlimTensor*>(host));
  // Column-major [rows, 1]: the elements in storage order are the rows.
  const auto* p = static_cast<const int64_t*>(owner->data_ptr());
  return std::vector<int64_t>(p, p + owner->numel());
}

const graph::GraphRunner::OutputCheck kAnyOutput = [](const SlimTensor&, size_t) { return Error::Ok; };

TEST(SelectGraphs, NonzeroFallsBackAndIsRemembered) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  g_static_size = false;
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  Tensor x = sparse_cuda();
  graph::GraphRunner runner(abi(), nullptr, 0, 1, graph::GraphMode::On, kAnyOutput);
  SlimTensor* in[1] = {x.get()};
  for (int i = 0; i < 2; ++i) {
    SlimTensor* out[1] = {nullptr};
    bool handled = true;
    ASSERT_EQ(runner.run(0, in, 1, out, 1, stream.get(), &handled), Error::Ok) << last_error_message();
    EXPECT_FALSE(handled) << "run " << i << ": the caller runs it the normal way";
    EXPECT_EQ(out[0], nullptr);
  }
  const graph::GraphStats s = runner.stats();
  EXPECT_EQ(s.fallbacks, 2u);
  EXPECT_EQ(s.captures, 0u);
  EXPECT_NE(runner.last_failure().find("has a data-dependent output size"), std::string::npos) << runner.last_failure();
  EXPECT_NE(runner.last_failure().find("which a CUDA graph cannot capture"), std::string::npos)
      << runner.last_failure();
  // The stream is not left capturing, and a normal call on it works.
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  ASSERT_EQ(cudaStreamIsCapturing(stream.get(), &status), cudaSuccess);
  EXPECT_EQ(status, cudaStreamCaptureStatusNone);
  void* ins[1] = {new SlimTensor(*x)};
  void* outs[1] = {nullptr};
  ASSERT_EQ(run(nullptr, ins, 1, outs, 1, stream.get(), nullptr), 0) << last_error_message();
  Tensor nz(static_cast<SlimTensor*>(outs[0]));
  EXPECT_EQ(host_longs(*nz), (std::vector<int64_t>{1, 3, 5}));
}

TEST(SelectGraphs, NonzeroFailsStrictRunsWithItsReason) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  g_static_size = false;
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  Tensor x = sparse_cuda();
  graph::GraphRunner runner(abi(), nullptr, 0, 1, graph::GraphMode::Strict, kAnyOutput);
  SlimTensor* in[1] = {x.get()};
  SlimTensor* out[1] = {nullptr};
  bool handled = true;
  EXPECT_EQ(runner.run(0, in, 1, out, 1, stream.get(), &handled), Error::NotSupported);
  const std::string message = last_error_message();
  EXPECT_NE(message.find("nonzero has a data-dependent output size"), std::string::npos) << message;
  EXPECT_EQ(out[0], nullptr);
}

TEST(SelectGraphs, NonzeroStaticIsCapturedAndReplayed) {
  SLIMCUDA_REQUIRE_GPU_OR_SKIP();
  g_static_size = true;
  TestStream stream;
  ASSERT_TRUE(stream.ok());
  Tensor x = sparse_cuda();
  graph::GraphRunner runner(abi(), nullptr, 0, 1, graph::GraphMode::Strict, kAnyOutput);
  SlimTensor* in[1] = {x.get()};
  for (int i = 0; i < 2; ++i) {  // the capture, then a replay
    SlimTensor* out[1] = {nullptr};
    bool handled = false;
    ASSERT_EQ(runner.run(0, in, 1, out, 1, stream.get(), &handled), Error::Ok) << last_error_message();
    ASSERT_TRUE(handled);
    Tensor y(out[0]);
    ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
    EXPECT_EQ(y->sizes(), (std::vector<int64_t>{4, 1}));
    EXPECT_EQ(host_longs(*y), (std::vector<int64_t>{1, 3, 5, -1}));
  }
  EXPECT_EQ(runner.stats().captures, 1u);
  EXPECT_EQ(runner.stats().replays, 2u);
  g_static_size = false;
}

}  // namespace
}  // namespace slimcuda::testing
