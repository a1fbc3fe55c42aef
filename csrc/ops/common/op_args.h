// SPDX-License-Identifier: Apache-2.0
#pragma once

// Argument checks shared by the CPU and CUDA fallback ops: one place decides what a valid
// GEMM or convolution is, so both devices reject the same inputs with the same codes.
// Every failure records the last-error message and repeats it through aoti_torch_warn.

#include <cstdint>
#include <memory>
#include <vector>

#include "csrc/cuda/stream_context.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/aoti_torch.h"
#include "slimcuda/error.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {

/// What an AtenTensorHandle points to (as csrc/shims does).
inline SlimTensor* tensor_of(AtenTensorHandle h) noexcept { return reinterpret_cast<SlimTensor*>(h); }
inline AtenTensorHandle handle_of(SlimTensor* t) noexcept { return reinterpret_cast<AtenTensorHandle>(t); }

/// Repeats this thread's last-error message through aoti_torch_warn and returns `error`.
Error warn_last_error(Error error, const char* file, int line) noexcept;

enum class Activation : int8_t { None, Relu, Gelu };

/// A checked GEMM, every operand seen as 3-D [batch, rows, cols] with element strides:
///   out[b] = act(beta * self[b] + alpha * (a[b] @ b[b])), self broadcast (stride 0).
/// self == nullptr (mm/bmm, or beta == 0) means no self term at all.
struct GemmProblem {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  ScalarType dtype = ScalarType::Float;
  int device = -1;  ///< CUDA device index (CPU: -1)
  const SlimTensor* out = nullptr;
  const SlimTensor* a = nullptr;
  const SlimTensor* b = nullptr;
  const SlimTensor* self = nullptr;
  int64_t out_strides[3] = {0, 0, 0};
  int64_t a_strides[3] = {0, 0, 0};
  int64_t b_strides[3] = {0, 0, 0};
  int64_t self_strides[3] = {0, 0, 0};
  double beta = 0.0, alpha = 1.0;
  Activation act = Activation::None;
};

/// Checks a GEMM's handles (out may be null: the op allocates it afterwards and calls
/// set_gemm_out), devices (all `device_type`, one CUDA device), dtypes (equal; float32,
/// float16 or bfloat16), ranks (2-D, or 3-D when batched) and shapes (a [B,M,K], b [B,K,N],
/// out [B,M,N], self broadcastable to it).
[[nodiscard]] Error check_gemm(DeviceType device_type, bool batched, AtenTensorHandle out, AtenTensorHandle self,
                               AtenTensorHandle a, AtenTensorHandle b, double beta, double alpha,
                               GemmProblem* p) noexcept;

/// A new tensor (CPU, or CUDA `device_index`) with these sizes and strides, allocated on
/// ctx (ignored for the CPU); *owner holds it until the op hands it out.
[[nodiscard]] Error new_tensor(ScalarType dtype, DeviceType type, int device_index, const std::vector<int64_t>& sizes,
                               const std::vector<int64_t>& strides, const StreamContext& ctx,
                               std::unique_ptr<SlimTensor>* owner);

/// Fills p->out and its strides from a tensor with p's shape.
void set_gemm_out(const SlimTensor* out, bool batched, GemmProblem* p) noexcept;

/// A checked convolution, always seen as 3 spatial dimensions (1-D and 2-D ones padded
/// with leading size-1 dimensions, stride 1, padding 0, dilation 1).
struct ConvProblem {
  int spatial = 0;  ///< 1, 2 or 3: the caller's spatial rank
  int64_t n = 0, c_in = 0, c_out = 0, groups = 1;
  int64_t in[3] = {1, 1, 1}, kernel[3] = {1, 1, 1}, out[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, padding[3] = {0, 0, 0}, dilation[3] = {1, 1, 1}, output_padding[3] = {0, 0, 0};
  bool transposed = false;
  bool channels_last = false;  ///< the input's strides are channels-last (NHWC / NDHWC)
  ScalarType dtype = ScalarType::Float;
  int device = -1;
  const SlimTensor* input = nullptr;
  const SlimTensor* weight = nullptr;
  const SlimTensor* bias = nullptr;
  /// The output's sizes and strides as the op allocates it (contiguous or channels-last).
  std::vector<int64_t> out_sizes, out_strides;
};

/// Checks a convolution's handles, devices, dtypes, ranks, channel counts and option lists
/// and computes the output shape (may throw std::bad_alloc; call inside c_entry).
[[nodiscard]] Error check_convolution(DeviceType device_type, AtenTensorHandle input, AtenTensorHandle weight,
                                      AtenTensorHandle* bias, const int64_t* stride, int64_t stride_len,
                                      const int64_t* padding, int64_t padding_len, const int64_t* dilation,
                                      int64_t dilation_len, int32_t transposed, const int64_t* output_padding,
                                      int64_t output_padding_len, int64_t groups, AtenTensorHandle* ret0,
                                      ConvProblem* p);

/// Whether strides (of sizes [N,C,*spatial]) are channels-last: C innermost, then the
/// spatial dimensions, then N, and not also plain contiguous (C == 1, all-1 spatial, ...).
[[nodiscard]] bool is_channels_last(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) noexcept;

/// Channels-last strides for sizes [N,C,*spatial].
[[nodiscard]] std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes);

}  // namespace slimcuda::ops

/// In an op body: fails with `error` and a formatted
/// message, recorded and warned, when `cond` is false.
#define SLIMCUDA_OP_CHECK(cond, error, ...)                                 \
  do {                                                                      \
    if (!(cond)) {                                                          \
      ::slimcuda::set_last_error((error), __VA_ARGS__);                     \
      return ::slimcuda::ops::warn_last_error((error), __FILE__, __LINE__); \
    }                                                                       \
  } while (0)

/// Propagates a failing Error (its message already recorded), warning it once more.
#define SLIMCUDA_OP_TRY(expr)                                                        \
  do {                                                                               \
    const ::slimcuda::Error slimcuda_op_err_ = (expr);                               \
    if (slimcuda_op_err_ != ::slimcuda::Error::Ok)                                   \
      return ::slimcuda::ops::warn_last_error(slimcuda_op_err_, __FILE__, __LINE__); \
  } while (0)
