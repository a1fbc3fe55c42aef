// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/conv/convolution_cuda.h"

#include <cudnn.h>

#include <cstring>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/cuda_libs/cudnn.h"
#include "csrc/memory/device_memory.h"
#include "csrc/ops/common/library_handles.h"
#include "csrc/ops/conv/convolution_cudnn.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

constexpr size_t kMaxCachedPlans = 256;  // per thread

#define SLIMCUDA_CUDNN_TRY(api, call)                                                                          \
  do {                                                                                                         \
    const cudnnStatus_t slimcuda_st_ = (call);                                                                 \
    if (slimcuda_st_ != CUDNN_STATUS_SUCCESS)                                                                  \
      return set_last_error(Error::Internal, "%s failed: %s", #call, (api).cudnnGetErrorString(slimcuda_st_)); \
  } while (0)

cudnnDataType_t data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return CUDNN_DATA_HALF;
    case ScalarType::BFloat16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

// cuDNN wants >= 4-D: a 1-D convolution becomes 2-D with a leading H of 1.
void as_cudnn_dims(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, std::vector<int>* dims,
                   std::vector<int>* str) {
  std::vector<int64_t> s = sizes, t = strides;
  if (s.size() == 3) {
    s.insert(s.begin() + 2, 1);
    t.insert(t.begin() + 2, t[2] * std::max<int64_t>(s[3], 1));
  }
  dims->assign(s.begin(), s.end());
  str->assign(t.begin(), t.end());
}

struct Plan {
  const cuda_libs::CudnnApi* api = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t fwd{};
  cudnnConvolutionBwdDataAlgo_t bwd{};
  size_t workspace = 0;
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (api == nullptr) return;
    if (conv != nullptr) api->cudnnDestroyConvolutionDescriptor(conv);
    if (w != nullptr) api->cudnnDestroyFilterDescriptor(w);
    if (bias != nullptr) api->cudnnDestroyTensorDescriptor(bias);
    if (y != nullptr) api->cudnnDestroyTensorDescriptor(y);
    if (x != nullptr) api->cudnnDestroyTensorDescriptor(x);
  }
};

Error tensor_desc(const cuda_libs::CudnnApi& api, cudnnDataType_t type, const std::vector<int64_t>& sizes,
                  const std::vector<int64_t>& strides, cudnnTensorDescriptor_t* out) {
  std::vector<int> dims, str;
  as_cudnn_dims(sizes, strides, &dims, &str);
  SLIMCUDA_CUDNN_TRY(api, api.cudnnCreateTensorDescriptor(out));
  SLIMCUDA_CUDNN_TRY(
      api, api.cudnnSetTensorNdDescriptor(*out, type, static_cast<int>(dims.size()), dims.data(), str.data()));
  return Error::Ok;
}

std::string plan_key(const ConvProblem& p, const SlimTensor& w, const SlimTensor& out, bool weight_nhwc) {
  std::string k;
  auto add = [&k](int64_t v) {
    k += std::to_string(v);
    k += ',';
  };
  for (const std::vector<int64_t>* v : {&p.input->sizes(), &p.input->strides(), &w.sizes(), &out.strides()}) {
    for (int64_t x : *v) add(x);
    k += '|';
  }
  for (int i = 0; i < 3; ++i) add(p.stride[i]), add(p.padding[i]), add(p.dilation[i]);
  add(p.groups), add(p.transposed), add(static_cast<int64_t>(p.dtype)), add(p.device), add(weight_nhwc);
  add(p.bias != nullptr);
  return k;
}

// SLIMCUDA_CUDNN_BENCHMARK (csrc/config, read as a plan is built): choose each shape's
// algorithm by running them (cudnnFind*AlgorithmEx, as torch.backends.cudnn.benchmark =
// True does) instead of by cuDNN's heuristics (PyTorch's default). Finding synchronizes the
// stream, once per shape, on the first call: off by default (a run must not synchronize;
// graph capture needs that).
bool benchmark_algorithms() { return config::get_bool(config::Key::CudnnBenchmark); }

// The scratch a benchmark run may use (the caching allocator's, on the call's stream).
constexpr size_t kFindWorkspace = size_t{256} << 20;

// How many candidates to ask cuDNN for.
constexpr int kRequest = 8;

// The plan's descriptors: input, output, filter, convolution (math type by dtype), bias.
Error describe(const cuda_libs::CudnnApi& api, const ConvProblem& p, const SlimTensor& w, bool weight_nhwc,
               const SlimTensor& out, Plan* plan) {
  plan->api = &api;
  const cudnnDataType_t type = data_type(p.dtype);
  // Transposed: y = conv_transpose(x, w) is the backward-data pass of a forward convolution
  // from y to x, whose "dy" is our input and "dx" our output.
  SLIMCUDA_RETURN_IF_ERROR(tensor_desc(api, type, p.input->sizes(), p.input->strides(), &plan->x));
  SLIMCUDA_RETURN_IF_ERROR(tensor_desc(api, type, out.sizes(), out.strides(), &plan->y));
  std::vector<int> wdims, wstr;
  as_cudnn_dims(w.sizes(), w.strides(), &wdims, &wstr);
  SLIMCUDA_CUDNN_TRY(api, api.cudnnCreateFilterDescriptor(&plan->w));
  SLIMCUDA_CUDNN_TRY(api,
                     api.cudnnSetFilterNdDescriptor(plan->w, type, weight_nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                                    static_cast<int>(wdims.size()), wdims.data()));
  const int nsp = p.spatial == 1 ? 2 : p.spatial;
  std::vector<int> pad, stride, dil;
  for (int i = 3 - nsp; i < 3; ++i) {
    pad.push_back(static_cast<int>(p.padding[i]));
    stride.push_back(static_cast<int>(p.stride[i]));
    dil.push_back(static_cast<int>(p.dilation[i]));
  }
  SLIMCUDA_CUDNN_TRY(api, api.cudnnCreateConvolutionDescriptor(&plan->conv));
  SLIMCUDA_CUDNN_TRY(api, api.cudnnSetConvolutionNdDescriptor(plan->conv, nsp, pad.data(), stride.data(), dil.data(),
                                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  SLIMCUDA_CUDNN_TRY(api, api.cudnnSetConvolutionGroupCount(plan->conv, static_cast<int>(p.groups)));
  // float32: CUDNN_DEFAULT_MATH lets cuDNN use TF32 (PyTorch: allow_tf32 = True for cuDNN);
  // float16/bfloat16: tensor cores.
  SLIMCUDA_CUDNN_TRY(api, api.cudnnSetConvolutionMathType(
                              plan->conv, p.dtype == ScalarType::Float ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH));
  if (p.bias != nullptr) {
    std::vector<int64_t> bsizes(out.dim(), 1), bstrides(out.dim(), 1);
    bsizes[1] = p.c_out;
    bstrides = contiguous_strides(bsizes);
    SLIMCUDA_RETURN_IF_ERROR(tensor_desc(api, type, bsizes, bstrides, &plan->bias));
  }
  return Error::Ok;
}

// cuDNN's algorithm for the plan by running the candidates (SLIMCUDA_CUDNN_BENCHMARK), within
// a scratch workspace of kFindWorkspace bytes.
Error benchmark_algorithm(const cuda_libs::CudnnApi& api, cudnnHandle_t handle, const ConvProblem& p,
                          const SlimTensor& w, const SlimTensor& out, const StreamContext& ctx, Plan* plan) {
  int found = 0;
  auto scratch = device_memory::allocate(kFindWorkspace, 0, ctx);
  if (!scratch.ok()) return set_last_error(scratch.error(), "cuDNN benchmark scratch: %s", last_error_message());
  cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
  if (!p.transposed) {
    cudnnConvolutionFwdAlgoPerf_t perf[kRequest];
    st = api.cudnnFindConvolutionForwardAlgorithmEx(handle, plan->x, p.input->data_ptr(), plan->w, w.data_ptr(),
                                                    plan->conv, plan->y, out.data_ptr(), kRequest, &found, perf,
                                                    scratch.value(), kFindWorkspace);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kFindWorkspace) continue;
      plan->fwd = perf[i].algo;
      plan->workspace = perf[i].memory;
      break;
    }
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kRequest];
    st = api.cudnnFindConvolutionBackwardDataAlgorithmEx(handle, plan->w, w.data_ptr(), plan->x, p.input->data_ptr(),
                                                         plan->conv, plan->y, out.data_ptr(), kRequest, &found, perf,
                                                         scratch.value(), kFindWorkspace);
    for (int i = 0; st == CUDNN_STATUS_SUCCESS && i < found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kFindWorkspace) continue;
      plan->bwd = perf[i].algo;
      plan->workspace = perf[i].memory;
      break;
    }
  }
  (void)device_memory::free(scratch.value(), ctx.device());
  SLIMCUDA_CHECK_OR_RETURN(st == CUDNN_STATUS_SUCCESS && found > 0, Error::Internal,
                           "cuDNN could not benchmark this convolution: %s", api.cudnnGetErrorString(st));
  return Error::Ok;
}

// cuDNN's first working algorithm by its heuristics, and its workspace.
Error heuristic_algorithm(const cuda_libs::CudnnApi& api, cudnnHandle_t handle, const ConvProblem& p, Plan* plan) {
  int found = 0;
  if (!p.transposed) {
    cudnnConvolutionFwdAlgoPerf_t perf[kRequest];
    SLIMCUDA_CUDNN_TRY(api, api.cudnnGetConvolutionForwardAlgorithm_v7(handle, plan->x, plan->w, plan->conv, plan->y,
                                                                       kRequest, &found, perf));
    for (int i = 0; i < found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      plan->fwd = perf[i].algo;
      SLIMCUDA_CUDNN_TRY(api, api.cudnnGetConvolutionForwardWorkspaceSize(handle, plan->x, plan->w, plan->conv, plan->y,
                                                                          plan->fwd, &plan->workspace));
      return Error::Ok;
    }
  } else {
    cudnnConvolutionBwdDataAlgoPerf_t perf[kRequest];
    SLIMCUDA_CUDNN_TRY(api, api.cudnnGetConvolutionBackwardDataAlgorithm_v7(handle, plan->w, plan->x, plan->conv,
                                                                            plan->y, kRequest, &found, perf));
    for (int i = 0; i < found; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS) continue;
      plan->bwd = perf[i].algo;
      SLIMCUDA_CUDNN_TRY(api, api.cudnnGetConvolutionBackwardDataWorkspaceSize(handle, plan->w, plan->x, plan->conv,
                                                                               plan->y, plan->bwd, &plan->workspace));
      return Error::Ok;
    }
  }
  return set_last_error(Error::NotSupported, "cuDNN offers no algorithm for this convolution");
}

Error build_plan(const cuda_libs::CudnnApi& api, cudnnHandle_t handle, const ConvProblem& p, const SlimTensor& w,
                 bool weight_nhwc, const SlimTensor& out, const StreamContext& ctx, Plan* plan) {
  SLIMCUDA_RETURN_IF_ERROR(describe(api, p, w, weight_nhwc, out, plan));
  return benchmark_algorithms() ? benchmark_algorithm(api, handle, p, w, out, ctx, plan)
                                : heuristic_algorithm(api, handle, p, plan);
}

// The legacy API's convolution of p with `w` (packed) and `bias` (packed or null).
Error convolution_legacy(const ConvProblem& p, const SlimTensor* w, bool weight_nhwc, const SlimTensor* bias,
                         const SlimTensor& out, const StreamContext& ctx) {
  auto api_r = cuda_libs::cudnn();
  if (!api_r.ok()) return api_r.error();
  const cuda_libs::CudnnApi& api = *api_r.value();
  cudnnHandle_t handle = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(cudnn_handle(api, ctx.device(), ctx.stream(), &handle));

  thread_local std::unordered_map<std::string, std::unique_ptr<Plan>> plans;
  const std::string key = plan_key(p, *w, out, weight_nhwc);
  auto it = plans.find(key);
  if (it == plans.end()) {
    if (plans.size() >= kMaxCachedPlans) plans.clear();
    auto plan = std::make_unique<Plan>();
    SLIMCUDA_RETURN_IF_ERROR(build_plan(api, handle, p, *w, weight_nhwc, out, ctx, plan.get()));
    it = plans.emplace(key, std::move(plan)).first;
  }
  const Plan& plan = *it->second;

  void* workspace = nullptr;
  if (plan.workspace > 0) {
    auto r = device_memory::allocate(plan.workspace, 0, ctx);
    if (!r.ok())
      return set_last_error(r.error(), "no %zu-byte cuDNN workspace: %s", plan.workspace, last_error_message());
    workspace = r.value();
  }
  const float one = 1.0f, zero = 0.0f;
  cudnnStatus_t st;
  if (!p.transposed) {
    st = api.cudnnConvolutionForward(handle, &one, plan.x, p.input->data_ptr(), plan.w, w->data_ptr(), plan.conv,
                                     plan.fwd, workspace, plan.workspace, &zero, plan.y, out.data_ptr());
  } else {
    st = api.cudnnConvolutionBackwardData(handle, &one, plan.w, w->data_ptr(), plan.x, p.input->data_ptr(), plan.conv,
                                          plan.bwd, workspace, plan.workspace, &zero, plan.y, out.data_ptr());
  }
  // Stream-ordered reuse makes freeing right after the launch safe (see gemm_cuda.cc).
  if (workspace != nullptr) (void)device_memory::free(workspace, ctx.device());
  if (st != CUDNN_STATUS_SUCCESS) {
    return set_last_error(Error::Internal, "cuDNN convolution failed: %s", api.cudnnGetErrorString(st));
  }
  if (bias != nullptr) {
    SLIMCUDA_CUDNN_TRY(api,
                       api.cudnnAddTensor(handle, &one, plan.bias, bias->data_ptr(), &one, plan.y, out.data_ptr()));
  }
  return Error::Ok;
}

}  // namespace

Error convolution_cuda(const ConvProblem& p, const SlimTensor& out, const StreamContext& ctx) {
  if (out.numel() == 0) return Error::Ok;

  // The filter must be packed: NCHW (contiguous) or NHWC (channels-last); else a copy.
  const SlimTensor* w = p.weight;
  std::unique_ptr<SlimTensor> w_copy;
  bool weight_nhwc = false;
  if (is_contiguous(w->sizes(), w->strides())) {
    weight_nhwc = false;
  } else if (is_channels_last(w->sizes(), w->strides())) {
    weight_nhwc = true;
  } else {
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(clone(*w, false, ctx, &t));
    w_copy.reset(t);
    w = t;
  }

  // The bias is read as a packed [1, C, 1, ...] tensor.
  const SlimTensor* bias = p.bias;
  std::unique_ptr<SlimTensor> bias_copy;
  if (bias != nullptr && p.c_out > 1 && bias->strides()[0] != 1) {
    SlimTensor* t = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(clone(*bias, false, ctx, &t));
    bias_copy.reset(t);
    bias = t;
  }

  const ConvPath path = convolution_path();
  if (path != ConvPath::Legacy) {
    const Error e = convolution_cudnn(p, *w, bias, out, ctx);
    if (e != Error::NotSupported) return e;
    if (path == ConvPath::Frontend) {
      return set_last_error(Error::NotSupported,
                            "SLIMCUDA_CONV=frontend and the cuDNN frontend declined this convolution: %s",
                            convolution_cudnn_unsupported_reason());
    }
  }
  return convolution_legacy(p, w, weight_nhwc, bias, out, ctx);
}

}  // namespace slimcuda::ops
