// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/conv/convolution_cudnn.h"

#include <cuda_runtime_api.h>
#include <cudnn_frontend.h>

#include <algorithm>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "csrc/config/config.h"
#include "csrc/core/scalar_type.h"
#include "csrc/cuda_libs/cudnn.h"
#include "csrc/memory/device_memory.h"
#include "csrc/ops/common/cudnn_graph.h"
#include "csrc/ops/common/library_handles.h"
#include "csrc/ops/conv/conv_bias.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

namespace fe = cudnn_frontend;

constexpr size_t kMaxCachedGraphs = 256;  // per thread
// The frontend declares every tensor 16-byte aligned (its default), and engines chosen on
// that promise may use vector loads: a pointer that breaks it is declined, not risked.
constexpr uintptr_t kAlignment = 16;

// Tensor uids: the sorted-pointer execute takes user pointers in uid order.
enum Uid : int64_t { kX = 1, kW = 2, kBias = 3, kY = 4, kMaxUid = 4 };

// Everything a graph depends on (make_key).
using Key = cudnn_graph::GraphKey<64>;

struct CachedGraph {
  std::shared_ptr<fe::graph::Graph> graph;  // null: the frontend cannot serve this key
  std::string reason;                       // why not
  int64_t workspace = 0;
  bool bias_fused = false;    // false with a bias: launch_add_channel_bias after the graph
  std::vector<int64_t> uids;  // the user tensors' uids in the order execute takes them
};

struct ThreadState {
  std::unordered_map<Key, CachedGraph, cudnn_graph::GraphKeyHash> graphs;
  ConvolutionCudnnStats stats;
  std::string unsupported_reason;
  cudnn_graph::SmVersionCache sm_version;
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

Error unsupported(const LastErrorSnapshot& snapshot, std::string reason) noexcept {
  return cudnn_graph::unsupported(snapshot, std::move(reason), &state().unsupported_reason);
}

// cuDNN wants >= 4-D: a 1-D convolution becomes 2-D with a leading H of 1 (as the legacy
// path does).
void as_cudnn_dims(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, std::vector<int64_t>* dims,
                   std::vector<int64_t>* str) {
  *dims = sizes;
  *str = strides;
  if (dims->size() == 3) {
    dims->insert(dims->begin() + 2, 1);
    str->insert(str->begin() + 2, (*str)[2] * std::max<int64_t>((*dims)[3], 1));
  }
}

Key make_key(const ConvProblem& p, const SlimTensor& w, const SlimTensor* bias, const SlimTensor& out) {
  Key k;
  k.add(p.input->dim());
  for (const std::vector<int64_t>* v :
       {&p.input->sizes(), &p.input->strides(), &w.sizes(), &w.strides(), &out.sizes(), &out.strides()}) {
    for (int64_t x : *v) k.add(x);
  }
  for (int i = 0; i < 3; ++i) k.add(p.stride[i]), k.add(p.padding[i]), k.add(p.dilation[i]);
  k.add(p.groups);
  k.add(p.transposed);
  k.add(static_cast<int64_t>(p.dtype));
  k.add(p.device);
  k.add(bias != nullptr);
  return k;
}

fe::DataType_t fe_type(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return fe::DataType_t::HALF;
    case ScalarType::BFloat16:
      return fe::DataType_t::BFLOAT16;
    default:
      return fe::DataType_t::FLOAT;
  }
}

// Builds the graph for p into *out: the convolution, then (fuse_bias) + bias as a pointwise
// node; false (with *reason) when cuDNN cannot serve it. An exception the frontend throws is
// caught here and is a reason too.
bool build_graph(const ConvProblem& p, const SlimTensor& w, const SlimTensor* bias, const SlimTensor& out,
                 bool fuse_bias, cudnnHandle_t handle, int sm_version, CachedGraph* result, std::string* reason) {
  return cudnn_graph::catch_frontend(reason, [&] {
    auto g = std::make_shared<fe::graph::Graph>();
    g->set_io_data_type(fe_type(p.dtype))
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    // Set here so the frontend never asks the CUDA runtime itself (it would dlopen one).
    g->set_sm_version(sm_version);
    auto tensor = [&](const char* name, int64_t uid, const std::vector<int64_t>& sizes,
                      const std::vector<int64_t>& strides) {
      std::vector<int64_t> dims, str;
      as_cudnn_dims(sizes, strides, &dims, &str);
      return g->tensor(fe::graph::Tensor_attributes().set_name(name).set_uid(uid).set_dim(dims).set_stride(str));
    };
    auto x = tensor("X", kX, p.input->sizes(), p.input->strides());
    auto wt = tensor("W", kW, w.sizes(), w.strides());
    const int nsp = p.spatial == 1 ? 2 : p.spatial;
    std::vector<int64_t> pad, stride, dil;
    for (int i = 3 - nsp; i < 3; ++i) {
      pad.push_back(p.padding[i]);
      stride.push_back(p.stride[i]);
      dil.push_back(p.dilation[i]);
    }
    std::shared_ptr<fe::graph::Tensor_attributes> y;
    if (!p.transposed) {
      y = g->conv_fprop(x, wt,
                        fe::graph::Conv_fprop_attributes()
                            .set_name("conv")
                            .set_padding(pad)
                            .set_stride(stride)
                            .set_dilation(dil)
                            .set_compute_data_type(fe::DataType_t::FLOAT));
    } else {
      // y = conv_transpose(x, w) is the data gradient of a forward convolution from y to x:
      // our input is its DY, our output its DX.
      y = g->conv_dgrad(x, wt,
                        fe::graph::Conv_dgrad_attributes()
                            .set_name("conv")
                            .set_padding(pad)
                            .set_stride(stride)
                            .set_dilation(dil)
                            .set_compute_data_type(fe::DataType_t::FLOAT));
    }
    std::vector<int64_t> out_dims, out_str;
    as_cudnn_dims(out.sizes(), out.strides(), &out_dims, &out_str);
    std::shared_ptr<fe::graph::Tensor_attributes> result_tensor = y;
    if (bias != nullptr && fuse_bias) {
      // [1, C, 1, ...]: strides of the output's layout (any value is right for size-1
      // dimensions; this is the form cuDNN's fusion engines expect).
      const bool nhwc = is_channels_last(out.sizes(), out.strides());
      std::vector<int64_t> bdims(out_dims.size(), 1), bstr(out_dims.size(), nhwc ? p.c_out : 1);
      bdims[1] = p.c_out;
      bstr[0] = p.c_out;
      bstr[1] = 1;
      auto b = g->tensor(fe::graph::Tensor_attributes().set_name("B").set_uid(kBias).set_dim(bdims).set_stride(bstr));
      y->set_dim(out_dims).set_stride(out_str);  // the virtual float32 intermediate
      result_tensor = g->pointwise(y, b,
                                   fe::graph::Pointwise_attributes()
                                       .set_name("bias")
                                       .set_mode(fe::PointwiseMode_t::ADD)
                                       .set_compute_data_type(fe::DataType_t::FLOAT));
    }
    result_tensor->set_output(true).set_uid(kY).set_dim(out_dims).set_stride(out_str).set_data_type(fe_type(p.dtype));

    if (!cudnn_graph::finalize(*g, handle, kX, kMaxUid, "convolution", &result->workspace, &result->uids, reason)) {
      return false;
    }
    result->graph = std::move(g);
    result->bias_fused = bias != nullptr && fuse_bias;
    return true;
  });
}

BiasElement bias_element(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return BiasElement::Half;
    case ScalarType::BFloat16:
      return BiasElement::BFloat16;
    default:
      return BiasElement::Float;
  }
}

// Runs a built graph on ctx's stream with its workspace; a bias the graph could not fuse
// is added after it by slimcuda's kernel.
Error run_graph(const CachedGraph& entry, const ConvProblem& p, const SlimTensor& w, const SlimTensor* bias,
                const SlimTensor& out, cudnnHandle_t handle, const StreamContext& ctx) {
  void* workspace = nullptr;
  if (entry.workspace > 0) {
    auto r = device_memory::allocate(static_cast<size_t>(entry.workspace), kAlignment, ctx);
    if (!r.ok()) {
      return set_last_error(r.error(), "no %lld-byte cuDNN convolution workspace on cuda:%d: %s",
                            static_cast<long long>(entry.workspace), p.device, last_error_message());
    }
    workspace = r.value();
  }
  void* by_uid[kMaxUid + 1] = {};
  by_uid[kX] = p.input->data_ptr();
  by_uid[kW] = w.data_ptr();
  by_uid[kBias] = bias != nullptr ? bias->data_ptr() : nullptr;
  by_uid[kY] = out.data_ptr();
  void* ptrs[kMaxUid];
  const int n = static_cast<int>(entry.uids.size());
  for (int i = 0; i < n; ++i) ptrs[i] = by_uid[entry.uids[i]];
  const Error result = cudnn_graph::execute(*entry.graph, handle, ptrs, n, workspace, "convolution");
  // Stream-ordered reuse makes freeing right after the launch safe (see gemm_cuda.cc).
  if (workspace != nullptr) (void)device_memory::free(workspace, p.device);
  SLIMCUDA_RETURN_IF_ERROR(result);
  if (bias != nullptr && !entry.bias_fused) {
    int64_t inner = 1;
    if (!is_channels_last(out.sizes(), out.strides())) {
      for (size_t i = 2; i < out.sizes().size(); ++i) inner *= out.sizes()[i];
    }
    const int64_t bias_stride = p.c_out > 1 ? bias->strides()[0] : 0;
    SLIMCUDA_RETURN_IF_ERROR(launch_add_channel_bias(out.data_ptr(), bias->data_ptr(), bias_element(p.dtype),
                                                     out.numel(), p.c_out, std::max<int64_t>(inner, 1), bias_stride,
                                                     ctx.stream()));
  }
  return Error::Ok;
}

Error convolution_cudnn_impl(const ConvProblem& p, const SlimTensor& w, const SlimTensor* bias, const SlimTensor& out,
                             const StreamContext& ctx) {
  ThreadState& ts = state();
  ts.unsupported_reason.clear();
  const LastErrorSnapshot snapshot;
  if (p.dtype != ScalarType::Float && p.dtype != ScalarType::Half && p.dtype != ScalarType::BFloat16) {
    return unsupported(snapshot, "the cuDNN graph convolution takes float32, float16 or bfloat16, not " +
                                     std::string(scalar_type_name(p.dtype)));
  }
  if (p.input == nullptr) return set_last_error(Error::InvalidArgument, "convolution without an input");
  if (!aligned(p.input->data_ptr()) || !aligned(w.data_ptr()) || !aligned(out.data_ptr()) ||
      (bias != nullptr && !aligned(bias->data_ptr()))) {
    return unsupported(snapshot, "input, weight, bias or output is not 16-byte aligned");
  }
  auto api = cuda_libs::cudnn();
  if (!api.ok()) return unsupported(snapshot, last_error_message());

  const Key key = make_key(p, w, bias, out);
  auto it = ts.graphs.find(key);
  if (it != ts.graphs.end() && it->second.graph == nullptr) return unsupported(snapshot, it->second.reason);

  cudnnHandle_t handle = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(cudnn_handle(*api.value(), p.device, ctx.stream(), &handle));

  if (it == ts.graphs.end()) {
    int sm = 0;
    SLIMCUDA_RETURN_IF_ERROR(ts.sm_version.get(p.device, &sm));
    CachedGraph built;
    std::string reason;
    bool ok = build_graph(p, w, bias, out, true, handle, sm, &built, &reason);
    if (!ok && bias != nullptr) {
      // No engine fuses the bias here (fusion engines want particular layouts and types):
      // the convolution alone, and slimcuda's kernel adds the bias after it.
      std::string unfused;
      ok = build_graph(p, w, bias, out, false, handle, sm, &built, &unfused);
      if (!ok && unfused != reason) reason += "; without the bias: " + unfused;
    }
    try {
      if (ts.graphs.size() >= kMaxCachedGraphs) ts.graphs.clear();
      if (!ok) built.reason = reason;
      it = ts.graphs.emplace(key, std::move(built)).first;
    } catch (...) {
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory caching a cuDNN graph");
    }
    if (!ok) {
      ++ts.stats.rejected;
      return unsupported(snapshot, reason);
    }
    ++ts.stats.graphs_built;
    if (bias != nullptr && !it->second.bias_fused) ++ts.stats.unfused_bias;
  }
  SLIMCUDA_RETURN_IF_ERROR(run_graph(it->second, p, w, bias, out, handle, ctx));
  ++ts.stats.executions;
  return Error::Ok;
}

}  // namespace

// SLIMCUDA_CONV's words are in ConvPath's order.
static_assert(std::string_view(config::kConvWords[static_cast<int>(ConvPath::Legacy)]) == "legacy" &&
              std::string_view(config::kConvWords[static_cast<int>(ConvPath::Frontend)]) == "frontend" &&
              std::string_view(config::kConvWords[static_cast<int>(ConvPath::Auto)]) == "auto");

ConvPath convolution_path() noexcept { return static_cast<ConvPath>(config::get_enum(config::Key::Conv)); }

void set_convolution_path(ConvPath path) noexcept {
  std::string why;  // a word of the table: never a bad value
  (void)config::set(config::Key::Conv, config::kConvWords[static_cast<int>(path)], &why);
}

const char* convolution_cudnn_unsupported_reason() noexcept { return state().unsupported_reason.c_str(); }

ConvolutionCudnnStats convolution_cudnn_stats() noexcept {
  ConvolutionCudnnStats s = state().stats;
  s.cached_graphs = 0;
  for (const auto& [key, entry] : state().graphs) s.cached_graphs += entry.graph != nullptr;
  return s;
}

Error convolution_cudnn(const ConvProblem& p, const SlimTensor& weight, const SlimTensor* bias, const SlimTensor& out,
                        const StreamContext& ctx) noexcept {
  try {
    return convolution_cudnn_impl(p, weight, bias, out, ctx);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory in cuDNN convolution");
  } catch (...) {
    return set_last_error(Error::Internal, "unexpected exception in cuDNN convolution");
  }
}

}  // namespace slimcuda::ops
