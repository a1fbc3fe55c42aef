// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/gemm/grouped_mm.h"

#include <cuda_runtime.h>

#include <cstring>
#include <vector>

#include "csrc/cuda/cuda_error.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/gemm/gemm_cpu.h"
#include "csrc/ops/gemm/gemm_cuda.h"

namespace slimcuda::ops {
namespace {

Error check(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offs) {
  SLIMCUDA_OP_CHECK(input.dim() == 2 && weight.dim() == 3 && offs.dim() == 1, Error::InvalidArgument,
                    "grouped_mm: input [S, K], weight [G, K, N] and offs [G] expected, got %lld-d, %lld-d and %lld-d",
                    static_cast<long long>(input.dim()), static_cast<long long>(weight.dim()),
                    static_cast<long long>(offs.dim()));
  SLIMCUDA_OP_CHECK(offs.sizes()[0] == weight.sizes()[0] && input.sizes()[1] == weight.sizes()[1],
                    Error::InvalidArgument, "grouped_mm: input [%lld, %lld], weight [%lld, %lld, %lld], offs [%lld]",
                    static_cast<long long>(input.sizes()[0]), static_cast<long long>(input.sizes()[1]),
                    static_cast<long long>(weight.sizes()[0]), static_cast<long long>(weight.sizes()[1]),
                    static_cast<long long>(weight.sizes()[2]), static_cast<long long>(offs.sizes()[0]));
  SLIMCUDA_OP_CHECK(offs.dtype() == ScalarType::Int || offs.dtype() == ScalarType::Long, Error::InvalidArgument,
                    "grouped_mm: offs must be int32 or int64");
  SLIMCUDA_OP_CHECK(input.dtype() == weight.dtype(), Error::InvalidArgument,
                    "grouped_mm: input and weight have different dtypes");
  SLIMCUDA_OP_CHECK(input.device() == weight.device() && input.device() == offs.device(), Error::InvalidArgument,
                    "grouped_mm: operands on different devices");
  return Error::Ok;
}

// The offsets on the host: one read-back on CUDA.
Error host_offsets(const SlimTensor& offs, const StreamContext& ctx, std::vector<int64_t>* out) {
  const auto g = static_cast<size_t>(offs.sizes()[0]);
  const size_t esize = offs.element_size();
  std::vector<unsigned char> raw(g * esize);
  const int64_t stride = offs.strides()[0];
  if (offs.device().is_cuda()) {
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    SLIMCUDA_CUDA_TRY(cudaStreamIsCapturing(ctx.stream(), &capture));
    SLIMCUDA_OP_CHECK(capture == cudaStreamCaptureStatusNone, Error::NotSupported,
                      "grouped_mm: its groups' sizes are read from the device, which a CUDA graph cannot capture");
    if (g > 0) {
      SLIMCUDA_CUDA_TRY(cudaMemcpy2DAsync(raw.data(), esize, offs.data_ptr(), static_cast<size_t>(stride) * esize,
                                          esize, g, cudaMemcpyDeviceToHost, ctx.stream()));
      SLIMCUDA_CUDA_TRY(cudaStreamSynchronize(ctx.stream()));
    }
  } else {
    const auto* p = static_cast<const unsigned char*>(offs.data_ptr());
    for (size_t i = 0; i < g; ++i) std::memcpy(raw.data() + i * esize, p + i * stride * esize, esize);
  }
  out->resize(g);
  for (size_t i = 0; i < g; ++i) {
    if (esize == 4) {
      int32_t v;
      std::memcpy(&v, raw.data() + i * 4, 4);
      (*out)[i] = v;
    } else {
      std::memcpy(&(*out)[i], raw.data() + i * 8, 8);
    }
  }
  return Error::Ok;
}

SlimTensor view(const SlimTensor& t, std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t offset) {
  return SlimTensor(t.storage(), std::move(sizes), std::move(strides), t.dtype(), t.storage_offset() + offset);
}

}  // namespace

Error grouped_mm(const SlimTensor& input, const SlimTensor& weight, const SlimTensor& offs, const StreamContext& ctx,
                 std::unique_ptr<SlimTensor>* out) {
  SLIMCUDA_RETURN_IF_ERROR(check(input, weight, offs));
  std::vector<int64_t> ends;
  SLIMCUDA_RETURN_IF_ERROR(host_offsets(offs, ctx, &ends));
  const int64_t s = input.sizes()[0], n = weight.sizes()[2];
  const Device d = input.device();
  std::unique_ptr<SlimTensor> result;
  SLIMCUDA_RETURN_IF_ERROR(new_tensor(input.dtype(), d.type, d.index, {s, n}, {n, 1}, ctx, &result));
  const size_t bytes = static_cast<size_t>(s * n) * result->element_size();
  if (bytes > 0) {
    if (d.is_cuda()) {
      SLIMCUDA_CUDA_TRY(cudaMemsetAsync(result->data_ptr(), 0, bytes, ctx.stream()));
    } else {
      std::memset(result->data_ptr(), 0, bytes);
    }
  }
  int64_t start = 0;
  for (size_t g = 0; g < ends.size(); ++g) {
    const int64_t end = ends[g];
    SLIMCUDA_OP_CHECK(end >= start && end <= s, Error::InvalidArgument,
                      "grouped_mm: offs[%zu] = %lld is below the previous offset or past the %lld rows", g,
                      static_cast<long long>(end), static_cast<long long>(s));
    if (end == start) continue;
    const auto& is = input.strides();
    const auto& ws = weight.strides();
    SlimTensor a = view(input, {end - start, input.sizes()[1]}, {is[0], is[1]}, start * is[0]);
    SlimTensor b = view(weight, {weight.sizes()[1], n}, {ws[1], ws[2]}, static_cast<int64_t>(g) * ws[0]);
    SlimTensor o = view(*result, {end - start, n}, {n, 1}, start * n);
    GemmProblem p;
    SLIMCUDA_RETURN_IF_ERROR(
        check_gemm(d.type, false, handle_of(&o), nullptr, handle_of(&a), handle_of(&b), 0.0, 1.0, &p));
    SLIMCUDA_RETURN_IF_ERROR(d.is_cuda() ? gemm_cuda(p, ctx) : gemm_cpu(p));
    start = end;
  }
  *out = std::move(result);
  return Error::Ok;
}

}  // namespace slimcuda::ops
