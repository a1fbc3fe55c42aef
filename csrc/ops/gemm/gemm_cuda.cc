// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/gemm/gemm_cuda.h"

#include <cublasLt.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "csrc/config/config.h"
#include "csrc/cuda_libs/cublaslt.h"
#include "csrc/memory/device_memory.h"
#include "csrc/ops/common/library_handles.h"
#include "csrc/ops/gemm/gemm_algo_choice.h"
#include "csrc/ops/gemm/gemm_empty.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

constexpr size_t kMaxWorkspace = size_t{4} << 20;  // per call, from the caching allocator
constexpr size_t kMaxCachedPlans = 512;            // per thread

// A logical row-major matrix [rows, cols] with element strides (sr, sc), as cuBLASLt sees it:
// a column-major stored matrix (stored_rows x stored_cols, ld) used with op N or T.
struct MatView {
  bool trans = false;
  int64_t stored_rows = 0, stored_cols = 0, ld = 1;
};

bool col_major_view(int64_t rows, int64_t cols, int64_t sr, int64_t sc, MatView* v) {
  const int64_t r1 = std::max<int64_t>(rows, 1), c1 = std::max<int64_t>(cols, 1);
  if ((sr == 1 || rows == 1) && (cols == 1 || sc >= r1)) {
    *v = {false, rows, cols, cols == 1 ? r1 : sc};
    return true;
  }
  if ((sc == 1 || cols == 1) && (rows == 1 || sr >= c1)) {
    *v = {true, cols, rows, rows == 1 ? c1 : sr};
    return true;
  }
  return false;
}

cudaDataType_t data_type(ScalarType t) {
  switch (t) {
    case ScalarType::Half:
      return CUDA_R_16F;
    case ScalarType::BFloat16:
      return CUDA_R_16BF;
    default:
      return CUDA_R_32F;
  }
}

// The largest power of two, up to 256, that divides the address: what cuBLASLt's heuristic
// must be told (CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_*_BYTES, whose default is 256). Operands
// are often views at a storage offset (an LSTM step's hidden state inside the sequence
// buffer, a sliced weight), so an operand can be less aligned than the allocator's 256.
uint32_t alignment(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t b = 256;
  while (b > 1 && a % b != 0) b /= 2;
  return b;
}

// cuBLASLt's alignment preferences cover A, B, C and D but not the epilogue's bias vector;
// its kernels may load the bias 16 bytes at a time, so a less aligned bias is added unfused.
constexpr uint32_t kMinBiasAlignment = 16;

// Descriptors and the chosen algorithm for one shape; owned by one thread's cache.
struct Plan {
  const cuda_libs::CublasLtApi* api = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    if (api == nullptr) return;
    if (pref != nullptr) api->cublasLtMatmulPreferenceDestroy(pref);
    if (d != nullptr) api->cublasLtMatrixLayoutDestroy(d);
    if (b != nullptr) api->cublasLtMatrixLayoutDestroy(b);
    if (a != nullptr) api->cublasLtMatrixLayoutDestroy(a);
    if (desc != nullptr) api->cublasLtMatmulDescDestroy(desc);
  }
};

#define SLIMCUDA_CUBLAS_TRY(api, call)                                                                             \
  do {                                                                                                             \
    const cublasStatus_t slimcuda_st_ = (call);                                                                    \
    if (slimcuda_st_ != CUBLAS_STATUS_SUCCESS)                                                                     \
      return set_last_error(Error::Internal, "%s failed: %s", #call, (api).cublasLtGetStatusString(slimcuda_st_)); \
  } while (0)

Error make_layout(const cuda_libs::CublasLtApi& api, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld,
                  int64_t batch, int64_t batch_stride, cublasLtMatrixLayout_t* out) {
  SLIMCUDA_CUBLAS_TRY(
      api, api.cublasLtMatrixLayoutCreate(out, type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
  if (batch > 1) {
    const int32_t count = static_cast<int32_t>(batch);
    SLIMCUDA_CUBLAS_TRY(
        api, api.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)));
    SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatrixLayoutSetAttribute(*out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                                                  &batch_stride, sizeof(batch_stride)));
  }
  return Error::Ok;
}

// The operands of one cuBLASLt call, decided from the problem.
struct Call {
  MatView x, y, dview;
  const void* x_ptr = nullptr;
  const void* y_ptr = nullptr;
  void* d_ptr = nullptr;
  int64_t x_batch_stride = 0, y_batch_stride = 0, d_batch_stride = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  float alpha = 1.0f, beta = 0.0f;
};

std::string plan_key(const GemmProblem& p, const Call& c) {
  std::string k;
  auto add = [&k](int64_t v) {
    k += std::to_string(v);
    k += ',';
  };
  for (const MatView* v : {&c.x, &c.y, &c.dview}) {
    add(v->trans), add(v->stored_rows), add(v->stored_cols), add(v->ld);
  }
  add(p.batch), add(c.x_batch_stride), add(c.y_batch_stride), add(c.d_batch_stride);
  add(static_cast<int64_t>(p.dtype)), add(static_cast<int64_t>(c.epilogue)), add(p.device);
  add(alignment(c.x_ptr)), add(alignment(c.y_ptr)), add(alignment(c.d_ptr));
  add(c.bias != nullptr ? alignment(c.bias) : 0);
  return k;
}

Error build_plan(const cuda_libs::CublasLtApi& api, cublasLtHandle_t handle, const GemmProblem& p, const Call& c,
                 Plan* plan) {
  plan->api = &api;
  const cudaDataType_t type = data_type(p.dtype);
  // TF32 stays off for float32 (CUBLAS_COMPUTE_32F, not _FAST_TF32): PyTorch's default
  // torch.backends.cuda.matmul.allow_tf32 = False.
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulDescCreate(&plan->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t ta = c.x.trans ? CUBLAS_OP_T : CUBLAS_OP_N, tb = c.y.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  SLIMCUDA_CUBLAS_TRY(api,
                      api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
  SLIMCUDA_CUBLAS_TRY(api,
                      api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &c.epilogue,
                                                              sizeof(c.epilogue)));
  if (c.bias != nullptr) {
    SLIMCUDA_CUBLAS_TRY(
        api, api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &type, sizeof(type)));
    SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &c.bias,
                                                                sizeof(c.bias)));
  }
  SLIMCUDA_RETURN_IF_ERROR(
      make_layout(api, type, c.x.stored_rows, c.x.stored_cols, c.x.ld, p.batch, c.x_batch_stride, &plan->a));
  SLIMCUDA_RETURN_IF_ERROR(
      make_layout(api, type, c.y.stored_rows, c.y.stored_cols, c.y.ld, p.batch, c.y_batch_stride, &plan->b));
  SLIMCUDA_RETURN_IF_ERROR(make_layout(api, type, c.dview.stored_rows, c.dview.stored_cols, c.dview.ld, p.batch,
                                       c.d_batch_stride, &plan->d));
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceCreate(&plan->pref));
  const uint64_t ws = kMaxWorkspace;
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceSetAttribute(
                               plan->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
  // The operands' real alignments (part of the plan key), so the heuristic cannot choose a
  // kernel that assumes the default 256 bytes. C is D (the result is read back in place).
  const uint32_t align_a = alignment(c.x_ptr), align_b = alignment(c.y_ptr), align_d = alignment(c.d_ptr);
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceSetAttribute(
                               plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &align_a, sizeof(align_a)));
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceSetAttribute(
                               plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &align_b, sizeof(align_b)));
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceSetAttribute(
                               plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &align_d, sizeof(align_d)));
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulPreferenceSetAttribute(
                               plan->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &align_d, sizeof(align_d)));
  cublasLtMatmulHeuristicResult_t found_algos[kGemmCandidates] = {};
  int found = 0;
  SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulAlgoGetHeuristic(handle, plan->desc, plan->a, plan->b, plan->d, plan->d,
                                                              plan->pref, kGemmCandidates, found_algos, &found));
  if (found == 0) {
    return set_last_error(Error::NotSupported,
                          "cuBLASLt has no algorithm for this GEMM (m %lld n %lld k %lld batch %lld)",
                          static_cast<long long>(p.m), static_cast<long long>(p.n), static_cast<long long>(p.k),
                          static_cast<long long>(p.batch));
  }
  plan->heuristic = found_algos[choose_gemm_algo(api, found_algos, found)];
  return Error::Ok;
}

// A tensor view with `like`'s sizes over `t`'s storage and the given strides.
SlimTensor view_as(const SlimTensor& t, const std::vector<int64_t>& sizes, std::vector<int64_t> strides) {
  return SlimTensor(t.storage(), sizes, std::move(strides), t.dtype(), t.storage_offset());
}

std::vector<int64_t> strides_3d_to(const SlimTensor& out, const int64_t s[3]) {
  if (out.dim() == 3) return {s[0], s[1], s[2]};
  return {s[1], s[2]};
}

// k == 0: nothing to multiply (and cuBLASLt takes no empty k): out = act(beta * self), or
// act(0), written with out's strides by one kernel.
Error gemm_empty_k(const GemmProblem& p, const StreamContext& ctx) {
  GemmElement type = GemmElement::Float;
  if (p.dtype == ScalarType::Half) type = GemmElement::Half;
  if (p.dtype == ScalarType::BFloat16) type = GemmElement::BFloat16;
  GemmEpilogue act = GemmEpilogue::None;
  if (p.act == Activation::Relu) act = GemmEpilogue::Relu;
  if (p.act == Activation::Gelu) act = GemmEpilogue::GeluTanh;
  int64_t out_strides[3] = {p.out_strides[0], p.out_strides[1], p.out_strides[2]};
  int64_t self_strides[3] = {p.self_strides[0], p.self_strides[1], p.self_strides[2]};
  if (p.batch == 1) out_strides[0] = self_strides[0] = 0;
  return launch_gemm_empty(p.out->data_ptr(), out_strides, p.self != nullptr ? p.self->data_ptr() : nullptr,
                           self_strides, type, p.batch, p.m, p.n, p.beta, act, ctx.stream());
}

// SLIMCUDA_GEMM_PLAIN (csrc/config, read at each GEMM): every GEMM on contiguous copies of
// its factors into a contiguous temporary result, self broadcast into it (no bias
// epilogue), then copied to out. A diagnostic: a model that is right with it and wrong
// without has met a layout or epilogue the direct path gets wrong.
bool plain_gemms() { return config::get_bool(config::Key::GemmPlain); }

// One GEMM; `plain`: on contiguous copies into a contiguous temporary (see plain_gemms).
// The temporaries a call makes (freed on every path): the result when cuBLASLt cannot
// write `out`'s layout, and contiguous copies of factors it cannot read in place.
struct Operands {
  const SlimTensor* target = nullptr;  // where cuBLASLt writes: out, or temp_out
  bool transposed = false;             // D^T = B^T A^T (else D = A B)
  std::unique_ptr<SlimTensor> temp_out, a_copy, b_copy;
};

// The result: `out` itself when cuBLASLt can write its layout, else a contiguous temporary.
Error result_view(const GemmProblem& p, const StreamContext& ctx, bool plain, Call* c, Operands* o) {
  o->target = p.out;
  const int64_t* os = p.out_strides;
  if (!plain && col_major_view(p.n, p.m, os[2], os[1], &c->dview) && !c->dview.trans) {
    o->transposed = true;  // D^T (N x M, column-major) = B^T A^T
  } else if (!plain && col_major_view(p.m, p.n, os[1], os[2], &c->dview) && !c->dview.trans) {
    o->transposed = false;  // D (M x N, column-major) = A B
  } else {
    SLIMCUDA_RETURN_IF_ERROR(new_tensor(p.dtype, DeviceType::CUDA, ctx.device(), p.out->sizes(),
                                        contiguous_strides(p.out->sizes()), ctx, &o->temp_out));
    o->target = o->temp_out.get();
    o->transposed = true;
    c->dview = {false, p.n, p.m, std::max<int64_t>(p.n, 1)};
  }
  int64_t ts[3] = {p.m * p.n, p.n, 1};
  if (o->target == p.out) std::copy(os, os + 3, ts);
  c->d_batch_stride = p.batch > 1 ? ts[0] : 0;
  c->d_ptr = o->target->data_ptr();
  return Error::Ok;
}

// The two factors, in place when their strides allow it, else contiguous copies.
Error factor_views(const GemmProblem& p, const StreamContext& ctx, bool plain, Call* c, Operands* o) {
  const SlimTensor* a = p.a;
  const SlimTensor* b = p.b;
  int64_t as[3], bs[3];
  std::copy(p.a_strides, p.a_strides + 3, as);
  std::copy(p.b_strides, p.b_strides + 3, bs);
  const bool transposed = o->transposed;
  auto views = [&]() {
    if (transposed) {
      return col_major_view(p.n, p.k, bs[2], bs[1], &c->x) && col_major_view(p.k, p.m, as[2], as[1], &c->y);
    }
    return col_major_view(p.m, p.k, as[1], as[2], &c->x) && col_major_view(p.k, p.n, bs[1], bs[2], &c->y);
  };
  if (plain || !views()) {
    MatView probe;
    const bool a_ok = !plain && (transposed ? col_major_view(p.k, p.m, as[2], as[1], &probe)
                                            : col_major_view(p.m, p.k, as[1], as[2], &probe));
    const bool b_ok = !plain && (transposed ? col_major_view(p.n, p.k, bs[2], bs[1], &probe)
                                            : col_major_view(p.k, p.n, bs[1], bs[2], &probe));
    if (!a_ok) {
      SlimTensor* t = nullptr;
      SLIMCUDA_RETURN_IF_ERROR(clone(*p.a, false, ctx, &t));
      o->a_copy.reset(t);
      a = t;
      as[0] = p.m * p.k, as[1] = p.k, as[2] = 1;
    }
    if (!b_ok) {
      SlimTensor* t = nullptr;
      SLIMCUDA_RETURN_IF_ERROR(clone(*p.b, false, ctx, &t));
      o->b_copy.reset(t);
      b = t;
      bs[0] = p.k * p.n, bs[1] = p.n, bs[2] = 1;
    }
    if (!views()) return set_last_error(Error::Internal, "no cuBLASLt layout for contiguous operands");
  }
  if (p.batch == 1) as[0] = bs[0] = 0;
  if (transposed) {
    c->x_ptr = b->data_ptr(), c->x_batch_stride = bs[0];
    c->y_ptr = a->data_ptr(), c->y_batch_stride = as[0];
  } else {
    c->x_ptr = a->data_ptr(), c->x_batch_stride = as[0];
    c->y_ptr = b->data_ptr(), c->y_batch_stride = bs[0];
  }
  return Error::Ok;
}

// self: a contiguous [N] bias with beta == 1 rides the bias epilogue (rows of D^T are
// out's columns); any other self is expanded into the result first and read back as C.
// Then the activation's epilogue.
Error epilogue(const GemmProblem& p, const StreamContext& ctx, bool plain, const Operands& o, Call* c) {
  c->alpha = static_cast<float>(p.alpha);
  const bool bias_epilogue = !plain && p.self != nullptr && p.beta == 1.0 && o.transposed && p.self_strides[0] == 0 &&
                             p.self_strides[1] == 0 && (p.self_strides[2] == 1 || p.n == 1) &&
                             alignment(p.self->data_ptr()) >= kMinBiasAlignment;
  if (bias_epilogue) {
    c->bias = p.self->data_ptr();
  } else if (p.self != nullptr) {
    const SlimTensor self_view = view_as(*p.self, o.target->sizes(), strides_3d_to(*o.target, p.self_strides));
    SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*o.target, self_view, ctx));
    c->beta = static_cast<float>(p.beta);
  }
  switch (p.act) {
    case Activation::None:
      c->epilogue = bias_epilogue ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
      break;
    case Activation::Relu:
      c->epilogue = bias_epilogue ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
      break;
    case Activation::Gelu:
      c->epilogue = bias_epilogue ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
      break;
  }
  return Error::Ok;
}

// The plan for this call, cached per thread (descriptors are mutated per call: the bias
// pointer).
Error cached_plan(const cuda_libs::CublasLtApi& api, cublasLtHandle_t handle, const GemmProblem& p, const Call& c,
                  Plan** out) {
  thread_local std::unordered_map<std::string, std::unique_ptr<Plan>> plans;
  const std::string key = plan_key(p, c);
  auto it = plans.find(key);
  if (it == plans.end()) {
    if (plans.size() >= kMaxCachedPlans) plans.clear();
    auto plan = std::make_unique<Plan>();
    SLIMCUDA_RETURN_IF_ERROR(build_plan(api, handle, p, c, plan.get()));
    it = plans.emplace(key, std::move(plan)).first;
  } else if (c.bias != nullptr) {
    SLIMCUDA_CUBLAS_TRY(api, api.cublasLtMatmulDescSetAttribute(it->second->desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                                                &c.bias, sizeof(c.bias)));
  }
  *out = it->second.get();
  return Error::Ok;
}

// The matmul on ctx's stream, with its workspace from the caching allocator.
Error launch(const cuda_libs::CublasLtApi& api, cublasLtHandle_t handle, const Plan& plan, const Call& c,
             const StreamContext& ctx) {
  void* workspace = nullptr;
  const size_t ws = plan.heuristic.workspaceSize;
  if (ws > 0) {
    auto w = device_memory::allocate(ws, 0, ctx);
    if (!w.ok()) return set_last_error(w.error(), "no %zu-byte cuBLASLt workspace: %s", ws, last_error_message());
    workspace = w.value();
  }
  const cublasStatus_t st =
      api.cublasLtMatmul(handle, plan.desc, &c.alpha, c.x_ptr, plan.a, c.y_ptr, plan.b, &c.beta, c.d_ptr, plan.d,
                         c.d_ptr, plan.d, &plan.heuristic.algo, workspace, ws, ctx.stream());
  // Stream-ordered: the caching allocator reuses the block only after work already enqueued
  // on this stream, so freeing right after the launch is safe.
  if (workspace != nullptr) (void)device_memory::free(workspace, ctx.device());
  if (st != CUBLAS_STATUS_SUCCESS) {
    return set_last_error(Error::Internal, "cublasLtMatmul failed: %s", api.cublasLtGetStatusString(st));
  }
  return Error::Ok;
}

Error gemm_cuda_once(const GemmProblem& p, const StreamContext& ctx, bool plain) {
  if (p.m == 0 || p.n == 0 || p.batch == 0) return Error::Ok;
  if (p.k == 0) return gemm_empty_k(p, ctx);
  auto api_r = cuda_libs::cublaslt();
  if (!api_r.ok()) return api_r.error();
  const cuda_libs::CublasLtApi& api = *api_r.value();
  cublasLtHandle_t handle = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(cublaslt_handle(api, ctx.device(), &handle));
  Call c;
  Operands o;
  SLIMCUDA_RETURN_IF_ERROR(result_view(p, ctx, plain, &c, &o));
  SLIMCUDA_RETURN_IF_ERROR(factor_views(p, ctx, plain, &c, &o));
  SLIMCUDA_RETURN_IF_ERROR(epilogue(p, ctx, plain, o, &c));
  Plan* plan = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(cached_plan(api, handle, p, c, &plan));
  SLIMCUDA_RETURN_IF_ERROR(launch(api, handle, *plan, c, ctx));
  if (o.temp_out != nullptr) SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*p.out, *o.temp_out, ctx));
  return Error::Ok;
}

}  // namespace

Error gemm_cuda(const GemmProblem& p, const StreamContext& ctx) {
  const bool plain = plain_gemms();
  const Error e = gemm_cuda_once(p, ctx, plain);
  // cuBLASLt may have no algorithm for operands this little aligned (views at odd offsets):
  // aligned contiguous copies then (what ATen does: the unfused path).
  if (e == Error::NotSupported && !plain) return gemm_cuda_once(p, ctx, true);
  return e;
}

}  // namespace slimcuda::ops
