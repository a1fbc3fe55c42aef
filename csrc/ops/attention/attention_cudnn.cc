// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/attention/attention_cudnn.h"

#include <cuda_runtime_api.h>
#include <cudnn_frontend.h>

#include <cstring>
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
#include "csrc/ops/attention/attention_mask.h"
#include "csrc/ops/common/cudnn_graph.h"
#include "csrc/ops/common/library_handles.h"
#include "csrc/tensor/copy.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

namespace fe = cudnn_frontend;

constexpr size_t kMaxCachedGraphs = 256;  // per thread
// cuDNN's SDPA engines move Q/K/V/O with 16-byte vector loads (the frontend declares and
// enforces this alignment, and so do we for the bias).
constexpr int64_t kAlignment = 16;

// Tensor uids: the frontend's sorted-pointer execute takes user pointers in uid order.
enum Uid : int64_t { kQ = 1, kK = 2, kV = 3, kBias = 4, kO = 5, kStats = 6, kMaxUid = 6 };

// How the bias reaches cuDNN.
enum class BiasMode : int64_t {
  None,
  Direct,    // the caller's tensor, broadcast batch/head dimensions as size 1
  Expanded,  // copied into a temporary with packed, aligned [seq_q, seq_kv] rows
  FromMask,  // a boolean mask turned into 0 / -inf in such a temporary
};

// The bias as cuDNN sees it: [bias_b, bias_h, seq_q, seq_kv] with these element strides.
struct BiasLayout {
  BiasMode mode = BiasMode::None;
  int64_t dims[4] = {0, 0, 0, 0};
  int64_t strides[4] = {0, 0, 0, 0};
};

// Everything a graph depends on (make_key).
using Key = cudnn_graph::GraphKey<56>;

struct CachedGraph {
  std::shared_ptr<fe::graph::Graph> graph;  // null: cuDNN cannot serve this key
  std::string reason;                       // why not
  int64_t workspace = 0;
  std::vector<int64_t> uids;  // the user tensors' uids in the order execute takes them
};

struct ThreadState {
  std::unordered_map<Key, CachedGraph, cudnn_graph::GraphKeyHash> graphs;
  AttentionCudnnStats stats;
  std::string unsupported_reason;
  cudnn_graph::SmVersionCache sm_version;
};

ThreadState& state() {
  thread_local ThreadState s;
  return s;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

bool aligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kAlignment == 0; }

// Answers NotSupported for this problem: the reason is kept for
// attention_cudnn_unsupported_reason(), the last-error text restored.
Error unsupported(const LastErrorSnapshot& snapshot, std::string reason) noexcept {
  return cudnn_graph::unsupported(snapshot, std::move(reason), &state().unsupported_reason);
}

// How the bias (of the I/O dtype, or a boolean mask) reaches cuDNN for this call. cuDNN
// reads it as [b|1, h|1, seq_q, seq_kv] rows; broadcasting along the query or key dimension,
// a non-unit inner stride or a misaligned row needs a packed copy, and a boolean mask always
// becomes 0 / -inf.
BiasLayout bias_layout(const AttentionProblem& p) {
  BiasLayout b;
  if (p.bias == nullptr) return b;
  const int64_t* s = p.bias_strides;
  b.dims[0] = s[0] == 0 ? 1 : p.batch;
  b.dims[1] = s[1] == 0 ? 1 : p.heads_q;
  b.dims[2] = p.seq_q;
  b.dims[3] = p.seq_kv;
  const int64_t es = 2;  // float16 / bfloat16 (what a Direct bias must be)
  const bool rows_ok = (s[3] == 1 || p.seq_kv == 1) && (s[2] != 0 || p.seq_q == 1) && (s[2] * es) % kAlignment == 0 &&
                       (s[1] * es) % kAlignment == 0 && (s[0] * es) % kAlignment == 0 && aligned(p.bias->data_ptr());
  if (p.bias_dtype == ScalarType::Bool) {
    b.mode = BiasMode::FromMask;
  } else if (rows_ok) {
    b.mode = BiasMode::Direct;
  } else {
    b.mode = BiasMode::Expanded;
  }
  if (b.mode == BiasMode::Direct) {
    // A size-1 dimension's stride is irrelevant to the math; give it the packed value so
    // the descriptor looks ordinary.
    b.strides[3] = 1;
    b.strides[2] = p.seq_q == 1 ? p.seq_kv : s[2];
    b.strides[1] = b.dims[1] == 1 ? b.strides[2] * p.seq_q : s[1];
    b.strides[0] = b.dims[0] == 1 ? b.strides[1] * b.dims[1] : s[0];
  } else {
    // Packed, with rows padded to 16 bytes.
    b.strides[3] = 1;
    b.strides[2] = round_up(p.seq_kv, kAlignment / es);
    b.strides[1] = b.strides[2] * p.seq_q;
    b.strides[0] = b.strides[1] * b.dims[1];
  }
  return b;
}

Key make_key(const AttentionProblem& p, const BiasLayout& b) {
  Key k;
  for (int64_t x : {p.batch, p.heads_q, p.heads_kv, p.seq_q, p.seq_kv, p.head_dim, p.head_dim_v}) k.add(x);
  for (const int64_t* st : {p.q_strides, p.k_strides, p.v_strides, p.out_strides})
    for (int i = 0; i < 4; ++i) k.add(st[i]);
  k.add(static_cast<int64_t>(p.dtype));
  k.add(p.device);
  k.add(p.causal);
  double scale = p.scale;
  int64_t scale_bits = 0;
  static_assert(sizeof(scale) == sizeof(scale_bits), "a double is 64 bits");
  std::memcpy(&scale_bits, &scale, sizeof(scale));
  k.add(scale_bits);
  k.add(static_cast<int64_t>(b.mode));
  for (int i = 0; i < 4; ++i) k.add(b.dims[i]), k.add(b.strides[i]);
  k.add(p.logsumexp != nullptr);
  for (int i = 0; i < 3; ++i) k.add(p.logsumexp != nullptr ? p.lse_strides[i] : 0);
  return k;
}

std::vector<int64_t> vec4(const int64_t* s) { return {s[0], s[1], s[2], s[3]}; }

// Builds the graph for p into *out; false (with *reason) when cuDNN cannot serve it. An
// exception the frontend throws is caught here and is a reason too (std::bad_alloc while
// recording it goes to attention_cudnn's own catch).
bool build_graph_with(const AttentionProblem& p, const BiasLayout& bias, cudnnHandle_t handle, int sm_version,
                      fe::AttentionImplementation_t implementation, CachedGraph* out, std::string* reason) {
  return cudnn_graph::catch_frontend(reason, [&] {
    auto g = std::make_shared<fe::graph::Graph>();
    const fe::DataType_t io = p.dtype == ScalarType::Half ? fe::DataType_t::HALF : fe::DataType_t::BFLOAT16;
    g->set_io_data_type(io)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    // Set here so the frontend never asks the CUDA runtime itself (it would dlopen one).
    g->set_sm_version(sm_version);
    auto tensor = [&](const char* name, int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides) {
      return g->tensor(fe::graph::Tensor_attributes()
                           .set_name(name)
                           .set_uid(uid)
                           .set_dim(std::move(dims))
                           .set_stride(std::move(strides)));
    };
    auto q = tensor("Q", kQ, {p.batch, p.heads_q, p.seq_q, p.head_dim}, vec4(p.q_strides));
    auto k = tensor("K", kK, {p.batch, p.heads_kv, p.seq_kv, p.head_dim}, vec4(p.k_strides));
    auto v = tensor("V", kV, {p.batch, p.heads_kv, p.seq_kv, p.head_dim_v}, vec4(p.v_strides));
    fe::graph::SDPA_attributes options;
    options.set_name("sdpa")
        .set_generate_stats(p.logsumexp != nullptr)
        .set_attn_scale(static_cast<float>(p.scale))
        .set_implementation(implementation);
    // PyTorch's is_causal is the upper-left diagonal: key j is masked when j > i.
    if (p.causal) options.set_causal_mask(true);
    if (bias.mode != BiasMode::None) {
      options.set_bias(tensor("Bias", kBias, vec4(bias.dims), vec4(bias.strides)));
    }
    auto [o, stats] = g->sdpa(q, k, v, std::move(options));
    o->set_output(true)
        .set_uid(kO)
        .set_dim({p.batch, p.heads_q, p.seq_q, p.head_dim_v})
        .set_stride(vec4(p.out_strides));
    if (p.logsumexp != nullptr) {
      if (stats == nullptr) {
        *reason = "the frontend made no Stats output";
        return false;
      }
      stats->set_output(true)
          .set_uid(kStats)
          .set_data_type(fe::DataType_t::FLOAT)
          .set_dim({p.batch, p.heads_q, p.seq_q, 1})
          .set_stride({p.lse_strides[0], p.lse_strides[1], p.lse_strides[2], 1});
    }

    if (!cudnn_graph::finalize(*g, handle, kQ, kMaxUid, "SDPA", &out->workspace, &out->uids, reason)) return false;
    out->graph = std::move(g);
    return true;
  });
}

// The frontend picks its newer single-node ("unified") SDPA where its checks allow, else
// the composite graph; when the unified one then fails to build, the composite one may
// still serve the problem, so it gets its own try before the key is given up.
bool build_graph(const AttentionProblem& p, const BiasLayout& bias, cudnnHandle_t handle, int sm_version,
                 CachedGraph* out, std::string* reason) {
  if (build_graph_with(p, bias, handle, sm_version, fe::AttentionImplementation_t::AUTO, out, reason)) return true;
  std::string composite;
  if (build_graph_with(p, bias, handle, sm_version, fe::AttentionImplementation_t::COMPOSITE, out, &composite)) {
    return true;
  }
  if (composite != *reason) *reason += "; composite: " + composite;
  return false;
}

// A device temporary of `bytes` on ctx, freed (stream-ordered) when it goes out of scope.
class Temporary {
 public:
  Temporary(int device) noexcept : device_(device) {}
  ~Temporary() {
    if (ptr_ != nullptr) (void)device_memory::free(ptr_, device_);
  }
  Temporary(const Temporary&) = delete;  // owns its block
  Temporary& operator=(const Temporary&) = delete;

  Error allocate(size_t bytes, const StreamContext& ctx, const char* what) noexcept {
    if (bytes == 0) return Error::Ok;
    auto r = device_memory::allocate(bytes, static_cast<size_t>(kAlignment), ctx);
    if (!r.ok()) {
      return set_last_error(r.error(), "no %zu-byte %s on cuda:%d: %s", bytes, what, device_, last_error_message());
    }
    ptr_ = r.value();
    return Error::Ok;
  }
  [[nodiscard]] void* get() const noexcept { return ptr_; }

 private:
  int device_;
  void* ptr_ = nullptr;
};

// Fills `dst` (bias.strides, p.dtype) with the bias or mask seen as bias.dims.
Error materialize_bias(const AttentionProblem& p, const BiasLayout& bias, void* dst,
                       const StreamContext& ctx) noexcept {
  // The caller's view: broadcast batch/head dimensions collapse to size 1 (any stride).
  int64_t src_strides[4];
  for (int i = 0; i < 4; ++i) src_strides[i] = p.bias_strides[i];
  if (bias.mode == BiasMode::FromMask) {
    return launch_mask_to_bias(dst, p.dtype == ScalarType::Half, bias.strides, p.bias->data_ptr(), src_strides,
                               bias.dims, ctx.stream());
  }
  SlimTensor* src_view = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(reinterpret(*p.bias, 4, bias.dims, src_strides, p.bias->storage_offset(), &src_view));
  std::unique_ptr<SlimTensor> src_owner(src_view);
  SlimTensor* dst_view = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(from_blob(dst, 4, bias.dims, bias.strides, 0, static_cast<int32_t>(p.dtype),
                                     static_cast<int32_t>(DeviceType::CUDA), p.device, &dst_view));
  std::unique_ptr<SlimTensor> dst_owner(dst_view);
  return copy_tensor(*dst_view, *src_view, ctx);
}

}  // namespace

// SLIMCUDA_ATTENTION's words are in AttentionPath's order.
static_assert(std::string_view(config::kAttentionWords[static_cast<int>(AttentionPath::Auto)]) == "auto" &&
              std::string_view(config::kAttentionWords[static_cast<int>(AttentionPath::Kernel)]) == "kernel" &&
              std::string_view(config::kAttentionWords[static_cast<int>(AttentionPath::Cudnn)]) == "cudnn");

AttentionPath attention_path_override() noexcept {
  return static_cast<AttentionPath>(config::get_enum(config::Key::Attention));
}

const char* attention_cudnn_unsupported_reason() noexcept { return state().unsupported_reason.c_str(); }

AttentionCudnnStats attention_cudnn_stats() noexcept {
  AttentionCudnnStats s = state().stats;
  s.cached_graphs = 0;
  for (const auto& [key, entry] : state().graphs) s.cached_graphs += entry.graph != nullptr;
  return s;
}

namespace {

// Runs a built graph on ctx's stream: a bias cuDNN cannot read as it is made into a
// temporary first, then the workspace.
Error run_graph(const CachedGraph& entry, const AttentionProblem& p, const BiasLayout& bias, cudnnHandle_t handle,
                const StreamContext& ctx) {
  Temporary bias_temp(p.device);
  const void* bias_ptr = bias.mode == BiasMode::Direct ? p.bias->data_ptr() : nullptr;
  if (bias.mode == BiasMode::Expanded || bias.mode == BiasMode::FromMask) {
    const size_t bytes = static_cast<size_t>(bias.strides[0] * bias.dims[0]) * 2;
    SLIMCUDA_RETURN_IF_ERROR(bias_temp.allocate(bytes, ctx, "attention bias temporary"));
    SLIMCUDA_RETURN_IF_ERROR(materialize_bias(p, bias, bias_temp.get(), ctx));
    bias_ptr = bias_temp.get();
  }
  Temporary workspace(p.device);
  SLIMCUDA_RETURN_IF_ERROR(workspace.allocate(static_cast<size_t>(entry.workspace), ctx, "cuDNN attention workspace"));

  void* by_uid[kMaxUid + 1] = {};
  by_uid[kQ] = p.q->data_ptr();
  by_uid[kK] = p.k->data_ptr();
  by_uid[kV] = p.v->data_ptr();
  by_uid[kBias] = const_cast<void*>(bias_ptr);
  by_uid[kO] = p.out->data_ptr();
  by_uid[kStats] = p.logsumexp != nullptr ? p.logsumexp->data_ptr() : nullptr;
  void* ptrs[kMaxUid];
  const int n = static_cast<int>(entry.uids.size());
  for (int i = 0; i < n; ++i) ptrs[i] = by_uid[entry.uids[i]];
  SLIMCUDA_RETURN_IF_ERROR(cudnn_graph::execute(*entry.graph, handle, ptrs, n, workspace.get(), "attention"));
  // The workspace and temporary go back to the caching allocator here: its reuse is
  // ordered on this stream, after the attention (see gemm_cuda.cc).
  return Error::Ok;
}

Error attention_cudnn_impl(const AttentionProblem& p, const StreamContext& ctx) {
  ThreadState& ts = state();
  ts.unsupported_reason.clear();
  const LastErrorSnapshot snapshot;
  if (p.dtype != ScalarType::Half && p.dtype != ScalarType::BFloat16) {
    return unsupported(
        snapshot, "cuDNN's fused attention takes float16 or bfloat16, not " + std::string(scalar_type_name(p.dtype)));
  }
  if (p.q == nullptr || p.k == nullptr || p.v == nullptr || p.out == nullptr) {
    return set_last_error(Error::InvalidArgument, "attention problem without q, k, v or out");
  }
  if (p.batch * p.heads_q * p.seq_q == 0) return Error::Ok;  // nothing to write
  if (p.seq_kv == 0 || p.head_dim == 0 || p.head_dim_v == 0) {
    return unsupported(snapshot, "an empty key sequence or head dimension (cuDNN needs seq_kv, head dims > 0)");
  }
  // cuDNN's fused SDPA takes head dims that are multiples of 8 up to 256. Asking it about
  // others is not only slow: on the H200 (cuDNN 9.19, 2026-12-01) rejecting head dim 12 in
  // float16 crashed the process inside cuDNN. Decline them here, before any cuDNN call.
  if (p.head_dim % 8 != 0 || p.head_dim_v % 8 != 0 || p.head_dim > 256 || p.head_dim_v > 256) {
    return unsupported(snapshot, "head dims " + std::to_string(p.head_dim) + "/" + std::to_string(p.head_dim_v) +
                                     " (cuDNN's fused attention takes multiples of 8 up to 256)");
  }
  const bool pointers_aligned = aligned(p.q->data_ptr()) && aligned(p.k->data_ptr()) && aligned(p.v->data_ptr()) &&
                                aligned(p.out->data_ptr()) &&
                                (p.logsumexp == nullptr || aligned(p.logsumexp->data_ptr()));
  if (!pointers_aligned) return unsupported(snapshot, "q, k, v, out or logsumexp is not 16-byte aligned");

  if (p.bias != nullptr && p.bias_dtype != p.dtype && p.bias_dtype != ScalarType::Bool) {
    // PyTorch adds a float32 bias to 16-bit attention in float32; cuDNN would take it
    // rounded to the I/O dtype (a large bias, ALiBi's say, would lose its low bits).
    return unsupported(snapshot, "a " + std::string(scalar_type_name(p.bias_dtype)) + " bias with " +
                                     scalar_type_name(p.dtype) +
                                     " attention (cuDNN takes the bias in the I/O dtype; slimcuda's kernel adds it "
                                     "in float32, as PyTorch does)");
  }
  auto api = cuda_libs::cudnn();
  if (!api.ok()) return unsupported(snapshot, last_error_message());

  const BiasLayout bias = bias_layout(p);
  const Key key = make_key(p, bias);
  auto it = ts.graphs.find(key);
  if (it != ts.graphs.end() && it->second.graph == nullptr) return unsupported(snapshot, it->second.reason);

  cudnnHandle_t handle = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(cudnn_handle(*api.value(), p.device, ctx.stream(), &handle));

  if (it == ts.graphs.end()) {
    int sm = 0;
    SLIMCUDA_RETURN_IF_ERROR(ts.sm_version.get(p.device, &sm));
    CachedGraph built;
    std::string reason;
    const bool ok = build_graph(p, bias, handle, sm, &built, &reason);
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
  }
  SLIMCUDA_RETURN_IF_ERROR(run_graph(it->second, p, bias, handle, ctx));
  ++ts.stats.executions;
  return Error::Ok;
}

}  // namespace

Error attention_cudnn(const AttentionProblem& p, const StreamContext& ctx) noexcept {
  try {
    return attention_cudnn_impl(p, ctx);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory in cuDNN attention");
  } catch (...) {
    return set_last_error(Error::Internal, "unexpected exception in cuDNN attention");
  }
}

}  // namespace slimcuda::ops
