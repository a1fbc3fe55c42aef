// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/common/op_args.h"

#include <algorithm>

#include "csrc/tensor/layout.h"
#include "slimcuda/scalar_type.h"

namespace slimcuda::ops {
namespace {

const char* dtype_name(ScalarType t) noexcept {
  switch (t) {
    case ScalarType::Float:
      return "float32";
    case ScalarType::Half:
      return "float16";
    case ScalarType::BFloat16:
      return "bfloat16";
    case ScalarType::Double:
      return "float64";
    default:
      return "a non-floating dtype";
  }
}

const char* device_name(DeviceType t) noexcept { return t == DeviceType::CUDA ? "CUDA" : "CPU"; }

// Common checks of one operand: type of device, one CUDA device for all, the op's dtype.
Error check_operand(const char* what, const SlimTensor* t, DeviceType device_type, int* device,
                    ScalarType* dtype) noexcept {
  SLIMCUDA_OP_CHECK(t->device().type == device_type, Error::InvalidArgument, "%s is a %s tensor; expected %s", what,
                    device_name(t->device().type), device_name(device_type));
  if (device_type == DeviceType::CUDA) {
    if (*device < 0) *device = t->device().index;
    SLIMCUDA_OP_CHECK(t->device().index == *device, Error::InvalidArgument,
                      "%s is on cuda:%d, the other operands on cuda:%d", what, t->device().index, *device);
  }
  const ScalarType d = t->dtype();
  SLIMCUDA_OP_CHECK(d == ScalarType::Float || d == ScalarType::Half || d == ScalarType::BFloat16, Error::NotSupported,
                    "%s has dtype %s; supported: float32, float16, bfloat16", what, dtype_name(d));
  SLIMCUDA_OP_CHECK(d == *dtype, Error::InvalidArgument, "%s has dtype %s, expected %s (all operands alike)", what,
                    dtype_name(d), dtype_name(*dtype));
  return Error::Ok;
}

// A 2-D or 3-D tensor's sizes and strides as [batch, rows, cols].
void as_3d(const SlimTensor& t, int64_t sizes[3], int64_t strides[3]) noexcept {
  if (t.dim() == 3) {
    for (int i = 0; i < 3; ++i) sizes[i] = t.sizes()[i], strides[i] = t.strides()[i];
  } else {
    sizes[0] = 1, strides[0] = 0;
    for (int i = 0; i < 2; ++i) sizes[i + 1] = t.sizes()[i], strides[i + 1] = t.strides()[i];
  }
}

}  // namespace

Error warn_last_error(Error error, const char* file, int line) noexcept {
  const char* function = ErrorContext::current();
  SLIMCUDA_SHIM(aoti_torch_warn)
  (function ? function : "slimcuda", file, static_cast<uint32_t>(line), last_error_message());
  return error;
}

Error check_gemm(DeviceType device_type, bool batched, AtenTensorHandle out, AtenTensorHandle self, AtenTensorHandle a,
                 AtenTensorHandle b, double beta, double alpha, GemmProblem* p) noexcept {
  const char* names[2] = {batched ? "batch1" : "mat1", batched ? "batch2" : "mat2"};
  SLIMCUDA_OP_CHECK(a != nullptr, Error::InvalidArgument, "null %s", names[0]);
  SLIMCUDA_OP_CHECK(b != nullptr, Error::InvalidArgument, "null %s", names[1]);
  const SlimTensor* ta = tensor_of(a);
  const SlimTensor* tb = tensor_of(b);
  p->dtype = ta->dtype();
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand(names[0], ta, device_type, &p->device, &p->dtype));
  SLIMCUDA_RETURN_IF_ERROR(check_operand(names[1], tb, device_type, &p->device, &p->dtype));
  const int64_t rank = batched ? 3 : 2;
  SLIMCUDA_OP_CHECK(ta->dim() == rank && tb->dim() == rank, Error::InvalidArgument,
                    "%s and %s must be %lld-D, got %lld-D and %lld-D", names[0], names[1], static_cast<long long>(rank),
                    static_cast<long long>(ta->dim()), static_cast<long long>(tb->dim()));
  int64_t as[3], bs[3];
  as_3d(*ta, as, p->a_strides);
  as_3d(*tb, bs, p->b_strides);
  SLIMCUDA_OP_CHECK(as[0] == bs[0], Error::InvalidArgument, "batch sizes differ: %lld and %lld",
                    static_cast<long long>(as[0]), static_cast<long long>(bs[0]));
  SLIMCUDA_OP_CHECK(as[2] == bs[1], Error::InvalidArgument, "shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                    static_cast<long long>(as[1]), static_cast<long long>(as[2]), static_cast<long long>(bs[1]),
                    static_cast<long long>(bs[2]));
  p->batch = as[0], p->m = as[1], p->k = as[2], p->n = bs[2];
  p->a = ta, p->b = tb;
  p->beta = beta, p->alpha = alpha;
  const int64_t want[3] = {p->batch, p->m, p->n};
  if (out != nullptr) {
    const SlimTensor* to = tensor_of(out);
    SLIMCUDA_RETURN_IF_ERROR(check_operand("out", to, device_type, &p->device, &p->dtype));
    int64_t os[3];
    SLIMCUDA_OP_CHECK(to->dim() == rank, Error::InvalidArgument, "out must be %lld-D, got %lld-D",
                      static_cast<long long>(rank), static_cast<long long>(to->dim()));
    as_3d(*to, os, p->out_strides);
    SLIMCUDA_OP_CHECK(os[0] == want[0] && os[1] == want[1] && os[2] == want[2], Error::InvalidArgument,
                      "out has shape [%lld, %lld, %lld] (as 3-D), expected [%lld, %lld, %lld]",
                      static_cast<long long>(os[0]), static_cast<long long>(os[1]), static_cast<long long>(os[2]),
                      static_cast<long long>(want[0]), static_cast<long long>(want[1]),
                      static_cast<long long>(want[2]));
    p->out = to;
  }
  p->self = nullptr;
  if (self != nullptr) {
    const SlimTensor* ts = tensor_of(self);
    SLIMCUDA_RETURN_IF_ERROR(check_operand("self", ts, device_type, &p->device, &p->dtype));
    SLIMCUDA_OP_CHECK(ts->dim() <= rank, Error::InvalidArgument, "self has %lld dimensions, at most %lld allowed",
                      static_cast<long long>(ts->dim()), static_cast<long long>(rank));
    // Right-aligned broadcasting to [B, M, N], as ATen's expand.
    for (int i = 0; i < 3; ++i) p->self_strides[i] = 0;
    const int64_t offset = 3 - ts->dim();
    for (int64_t d = 0; d < ts->dim(); ++d) {
      const int64_t size = ts->sizes()[d];
      const int64_t target = want[d + offset];
      SLIMCUDA_OP_CHECK(size == target || size == 1, Error::InvalidArgument,
                        "self's dimension %lld has size %lld, which does not broadcast to %lld",
                        static_cast<long long>(d), static_cast<long long>(size), static_cast<long long>(target));
      p->self_strides[d + offset] = size == 1 ? 0 : ts->strides()[d];
    }
    // beta == 0 ignores self entirely (NaN and Inf in it included), as ATen does.
    if (beta != 0.0) p->self = ts;
  }
  return Error::Ok;
}

Error new_tensor(ScalarType dtype, DeviceType type, int device_index, const std::vector<int64_t>& sizes,
                 const std::vector<int64_t>& strides, const StreamContext& ctx, std::unique_ptr<SlimTensor>* owner) {
  EmptySpec spec;
  SLIMCUDA_OP_TRY(check_empty(static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(),
                              static_cast<int32_t>(dtype), static_cast<int32_t>(type), device_index, false, &spec));
  SlimTensor* t = nullptr;
  SLIMCUDA_OP_TRY(empty_strided(spec, ctx, &t));
  owner->reset(t);
  return Error::Ok;
}

void set_gemm_out(const SlimTensor* out, bool batched, GemmProblem* p) noexcept {
  int64_t os[3];
  as_3d(*out, os, p->out_strides);
  p->out = out;
}

bool is_channels_last(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) noexcept {
  if (sizes.size() < 3 || sizes.size() != strides.size()) return false;
  const size_t nd = sizes.size();
  // Order: C, then spatial dims from last to first, then N; size-1 dimensions do not decide.
  std::vector<size_t> order;
  order.push_back(1);
  for (size_t d = nd - 1; d >= 2; --d) order.push_back(d);
  order.push_back(0);
  int64_t expected = 1;
  for (size_t i : order) {
    if (sizes[i] != 1 && strides[i] != expected) return false;
    expected *= sizes[i];
  }
  // Both layouts at once (e.g. C == 1): call it contiguous.
  int64_t c = 1;
  bool contiguous = true;
  for (size_t d = nd; d-- > 0;) {
    if (sizes[d] != 1 && strides[d] != c) contiguous = false;
    c *= sizes[d];
  }
  return !contiguous;
}

std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  const size_t nd = sizes.size();
  int64_t s = 1;
  strides[1] = s;
  s *= std::max<int64_t>(sizes[1], 1);
  for (size_t d = nd - 1; d >= 2; --d) {
    strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  strides[0] = s;
  return strides;
}

namespace {

// The channels: input channels in whole groups, the weight's shape for a plain or a
// transposed convolution, the output channels.
Error check_channels(const SlimTensor* in, const SlimTensor* w, int64_t groups, ConvProblem* p) {
  p->n = in->sizes()[0];
  p->c_in = in->sizes()[1];
  SLIMCUDA_OP_CHECK(p->c_in % groups == 0, Error::InvalidArgument, "input channels %lld not divisible by groups %lld",
                    static_cast<long long>(p->c_in), static_cast<long long>(groups));
  if (!p->transposed) {
    p->c_out = w->sizes()[0];
    SLIMCUDA_OP_CHECK(w->sizes()[1] * groups == p->c_in, Error::InvalidArgument,
                      "weight has %lld input channels per group, input %lld channels in %lld groups",
                      static_cast<long long>(w->sizes()[1]), static_cast<long long>(p->c_in),
                      static_cast<long long>(groups));
    SLIMCUDA_OP_CHECK(p->c_out % groups == 0, Error::InvalidArgument,
                      "output channels %lld not divisible by groups %lld", static_cast<long long>(p->c_out),
                      static_cast<long long>(groups));
  } else {
    SLIMCUDA_OP_CHECK(w->sizes()[0] == p->c_in, Error::InvalidArgument,
                      "transposed weight's first dimension %lld must equal input channels %lld",
                      static_cast<long long>(w->sizes()[0]), static_cast<long long>(p->c_in));
    p->c_out = w->sizes()[1] * groups;
  }
  return Error::Ok;
}

// stride, padding, dilation and output_padding: one entry per spatial dimension or one for
// all (padding and output_padding may be omitted), each within its minimum.
Error check_conv_lists(const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len,
                       const int64_t* dilation, int64_t dilation_len, const int64_t* output_padding,
                       int64_t output_padding_len, int sp, ConvProblem* p) {
  struct List {
    const char* name;
    const int64_t* v;
    int64_t len;
    int64_t* dst;
    int64_t min;
  } lists[4] = {{"stride", stride, stride_len, p->stride, 1},
                {"padding", padding, padding_len, p->padding, 0},
                {"dilation", dilation, dilation_len, p->dilation, 1},
                {"output_padding", output_padding, output_padding_len, p->output_padding, 0}};
  for (List& l : lists) {
    if (l.len == 0 && l.min == 0) continue;  // padding/output_padding omitted: zeros
    SLIMCUDA_OP_CHECK(l.v != nullptr || l.len == 0, Error::InvalidArgument, "null %s", l.name);
    SLIMCUDA_OP_CHECK(l.len == sp || l.len == 1, Error::InvalidArgument,
                      "%s has %lld entries, expected %d (one per spatial dimension) or 1", l.name,
                      static_cast<long long>(l.len), sp);
    for (int d = 0; d < sp; ++d) {
      const int64_t v = l.v[l.len == 1 ? 0 : d];
      SLIMCUDA_OP_CHECK(v >= l.min, Error::InvalidArgument, "%s[%d] = %lld, must be >= %lld", l.name, d,
                        static_cast<long long>(v), static_cast<long long>(l.min));
      l.dst[3 - sp + d] = v;
    }
  }
  return Error::Ok;
}

// The spatial sizes: input, kernel, and the output each gives (positive; a plain convolution's
// kernel fits the padded input, output_padding only when transposed).
Error check_spatial(const SlimTensor* in, const SlimTensor* w, int sp, ConvProblem* p) {
  for (int d = 0; d < sp; ++d) {
    const int i = 3 - sp + d;
    p->in[i] = in->sizes()[2 + d];
    p->kernel[i] = w->sizes()[2 + d];
    if (p->transposed) {
      SLIMCUDA_OP_CHECK(p->output_padding[i] < p->stride[i] || p->output_padding[i] < p->dilation[i],
                        Error::InvalidArgument, "output_padding[%d] must be smaller than stride or dilation", d);
      p->out[i] = (p->in[i] - 1) * p->stride[i] - 2 * p->padding[i] + p->dilation[i] * (p->kernel[i] - 1) +
                  p->output_padding[i] + 1;
    } else {
      SLIMCUDA_OP_CHECK(p->output_padding[i] == 0, Error::InvalidArgument,
                        "output_padding is only for transposed convolutions");
      const int64_t span = p->dilation[i] * (p->kernel[i] - 1) + 1;
      SLIMCUDA_OP_CHECK(p->in[i] + 2 * p->padding[i] >= span, Error::InvalidArgument,
                        "kernel size %lld (dilated %lld) is larger than the padded input %lld in dimension %d",
                        static_cast<long long>(p->kernel[i]), static_cast<long long>(span),
                        static_cast<long long>(p->in[i] + 2 * p->padding[i]), d);
      p->out[i] = (p->in[i] + 2 * p->padding[i] - span) / p->stride[i] + 1;
    }
    SLIMCUDA_OP_CHECK(p->out[i] > 0, Error::InvalidArgument, "output size %lld in dimension %d is not positive",
                      static_cast<long long>(p->out[i]), d);
  }
  return Error::Ok;
}

}  // namespace

Error check_convolution(DeviceType device_type, AtenTensorHandle input, AtenTensorHandle weight, AtenTensorHandle* bias,
                        const int64_t* stride, int64_t stride_len, const int64_t* padding, int64_t padding_len,
                        const int64_t* dilation, int64_t dilation_len, int32_t transposed,
                        const int64_t* output_padding, int64_t output_padding_len, int64_t groups,
                        AtenTensorHandle* ret0, ConvProblem* p) {
  SLIMCUDA_OP_CHECK(input != nullptr, Error::InvalidArgument, "null input");
  SLIMCUDA_OP_CHECK(weight != nullptr, Error::InvalidArgument, "null weight");
  SLIMCUDA_OP_CHECK(ret0 != nullptr, Error::InvalidArgument, "null ret0");
  const SlimTensor* in = tensor_of(input);
  const SlimTensor* w = tensor_of(weight);
  p->dtype = in->dtype();
  p->device = -1;
  SLIMCUDA_RETURN_IF_ERROR(check_operand("input", in, device_type, &p->device, &p->dtype));
  SLIMCUDA_RETURN_IF_ERROR(check_operand("weight", w, device_type, &p->device, &p->dtype));
  const int64_t nd = in->dim();
  SLIMCUDA_OP_CHECK(nd >= 3 && nd <= 5, Error::InvalidArgument,
                    "input must be 3-D, 4-D or 5-D ([N, C, *spatial]), got %lld-D", static_cast<long long>(nd));
  SLIMCUDA_OP_CHECK(w->dim() == nd, Error::InvalidArgument, "weight is %lld-D, expected %lld-D like the input",
                    static_cast<long long>(w->dim()), static_cast<long long>(nd));
  SLIMCUDA_OP_CHECK(groups >= 1, Error::InvalidArgument, "groups must be >= 1, got %lld",
                    static_cast<long long>(groups));
  const int sp = static_cast<int>(nd - 2);
  p->spatial = sp;
  p->transposed = transposed != 0;
  p->groups = groups;
  SLIMCUDA_RETURN_IF_ERROR(check_channels(in, w, groups, p));
  SLIMCUDA_RETURN_IF_ERROR(check_conv_lists(stride, stride_len, padding, padding_len, dilation, dilation_len,
                                            output_padding, output_padding_len, sp, p));
  SLIMCUDA_RETURN_IF_ERROR(check_spatial(in, w, sp, p));
  p->bias = nullptr;
  if (bias != nullptr && *bias != nullptr) {
    const SlimTensor* b = tensor_of(*bias);
    SLIMCUDA_RETURN_IF_ERROR(check_operand("bias", b, device_type, &p->device, &p->dtype));
    SLIMCUDA_OP_CHECK(b->dim() == 1 && b->sizes()[0] == p->c_out, Error::InvalidArgument,
                      "bias must be [%lld] (one per output channel)", static_cast<long long>(p->c_out));
    p->bias = b;
  }
  p->input = in;
  p->weight = w;
  p->channels_last = is_channels_last(in->sizes(), in->strides());
  p->out_sizes = {p->n, p->c_out};
  for (int d = 0; d < sp; ++d) p->out_sizes.push_back(p->out[3 - sp + d]);
  p->out_strides = p->channels_last ? channels_last_strides(p->out_sizes) : contiguous_strides(p->out_sizes);
  return Error::Ok;
}

}  // namespace slimcuda::ops
