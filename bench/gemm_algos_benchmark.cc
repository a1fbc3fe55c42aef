// SPDX-License-Identifier: Apache-2.0
// gemm_algos_benchmark: which of cuBLASLt's heuristic candidates is fastest for the GEMMs
// small exported models make (nn.Linear: out[m, n] = x[m, k] · w[n, k]ᵀ + bias, as
// aoti_torch_cuda_addmm_out gives them to cuBLASLt: D = Wᵀ-major, bias epilogue). For each
// shape it asks cuBLASLt for up to 8 algorithms with slimcuda's preferences (4 MiB workspace,
// 256-byte alignment) and times each: CUDA events around 20 back-to-back calls, median of
// 15 rounds. It prints every candidate (rank, split-K count, reduction scheme, tile, µs),
// then per shape the time of cuBLASLt's first pick, of slimcuda's choice among them
// (ops/gemm_algo_choice.h: the first without in-place split-K reduction), and of the fastest.
// A decode step's bfloat16 Linears (m 1/4/8, a Llama-shaped decoder's (n, k)) are timed on
// a rotating set of weight copies of more than 200 MB, so no call finds its weights in the
// L2 (50 MB on an H200), and slimcuda's GEMV (ops/gemv_cuda.h, what gemm_cuda runs for them)
// beside cuBLASLt, both with the bytes they must move per µs (GB/s).
// Usage: gemm_algos_benchmark   (needs a GPU and cuBLASLt; exits 2 without a GPU)
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/benchmark_checks.h"
#include "csrc/ops/gemm_algo_choice.h"
#include "csrc/ops/gemv_cuda.h"
#include "csrc/vendor/cublaslt.h"

namespace {

struct Shape {
  int64_t m, n, k;
  cudaDataType_t type;
  bool decoder = false;  // weights rotated over > 200 MB; the GEMV timed too
};

// One shape's summary: cuBLASLt's first candidate, slimcuda's pick (-1: none), the fastest,
// the GEMV (-1: not timed).
struct Row {
  Shape shape;
  int candidates = 0;
  double first = 0, slimcuda = -1, fastest = 1e30, gemv = -1;
  size_t weight_copies = 1;
};

// Bytes a GEMM must move at least: both factors, the bias and the result, once each.
double gemm_bytes(const Shape& s, size_t es) {
  return static_cast<double>(s.n * s.k + s.m * s.k + s.m * s.n + s.n) * static_cast<double>(es);
}

constexpr size_t kRotatedBytes = size_t{200} << 20;

const char* type_name(cudaDataType_t t) {
  return t == CUDA_R_32F ? "float32" : t == CUDA_R_16BF ? "bfloat16" : "float16";
}

size_t type_size(cudaDataType_t t) { return t == CUDA_R_32F ? 4 : 2; }

#define CHECK_LT(call)                                                                                     \
  do {                                                                                                     \
    const cublasStatus_t st = (call);                                                                      \
    if (st != CUBLAS_STATUS_SUCCESS) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, api.cublasLtGetStatusString(st)); \
      std::exit(1);                                                                                        \
    }                                                                                                      \
  } while (0)

template <class T>
T config(const slimcuda::vendor::CublasLtApi& api, const cublasLtMatmulAlgo_t& algo,
         cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  size_t written = 0;
  if (api.cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return T{};
  return v;
}

}  // namespace

int main() {
  require_gpu_or_exit("gemm_algos_benchmark");
  auto api_r = slimcuda::vendor::cublaslt("gemm_algos_benchmark");
  CHECK_OK(api_r.ok(), "loading cuBLASLt");
  const slimcuda::vendor::CublasLtApi& api = *api_r.value();
  cublasLtHandle_t handle = nullptr;
  CHECK_LT(api.cublasLtCreate(&handle));
  cudaStream_t stream = nullptr;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  constexpr size_t kWorkspace = size_t{4} << 20;  // ops/gemm_cuda.cc's kMaxWorkspace
  void* workspace = nullptr;
  CHECK_CUDA(cudaMalloc(&workspace, kWorkspace));
  cudaEvent_t t0 = nullptr, t1 = nullptr;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));

  std::vector<Shape> shapes;
  // The zoo's small Linear layers (attention_block: 32 tokens, dim 64, MLP 256; mlp_relu;
  // embedding_mlp) and transformer-sized ones (BERT/ViT base: 768, 3072) at a few token counts.
  for (int64_t m : {8, 32, 128, 512}) {
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {64, 64}, {192, 64}, {256, 64}, {64, 256}, {768, 768}, {2304, 768}, {3072, 768}, {768, 3072}}) {
      shapes.push_back({m, n, k, CUDA_R_32F});
    }
  }
  for (int64_t m : {32, 512}) {
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{{64, 256}, {768, 768}, {768, 3072}}) {
      shapes.push_back({m, n, k, CUDA_R_16BF});
    }
  }
  // One decode step of a Llama-shaped decoder (d 2048, MLP 8192, vocab 32000): fused QKV,
  // attention output, MLP up, MLP down, the LM head, at batch 1, 4 and 8.
  for (int64_t m : {1, 4, 8}) {
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {6144, 2048}, {2048, 2048}, {8192, 2048}, {2048, 8192}, {32000, 2048}}) {
      shapes.push_back({m, n, k, CUDA_R_16BF, true});
    }
  }

  std::printf("dtype m n k | rank splitk reduction tile stages | us\n");
  std::vector<Row> rows;
  for (const Shape& s : shapes) {
    const size_t es = type_size(s.type);
    void *x = nullptr, *d = nullptr, *bias = nullptr;
    CHECK_CUDA(cudaMalloc(&x, s.m * s.k * es));
    CHECK_CUDA(cudaMalloc(&d, s.m * s.n * es));
    CHECK_CUDA(cudaMalloc(&bias, s.n * es));
    CHECK_CUDA(cudaMemset(x, 0, s.m * s.k * es));
    CHECK_CUDA(cudaMemset(bias, 0, s.n * es));
    // The weights: one copy, or for the decoder rows enough copies that consecutive calls
    // never share one and the set overflows the L2 (each call then streams from HBM, as a
    // decode step's 16 layers of distinct weights do).
    const size_t w_bytes = static_cast<size_t>(s.n * s.k) * es;
    const size_t copies = s.decoder ? std::max<size_t>(2, (kRotatedBytes + w_bytes - 1) / w_bytes + 1) : 1;
    std::vector<void*> weights(copies, nullptr);
    for (void*& w : weights) {
      CHECK_CUDA(cudaMalloc(&w, w_bytes));
      CHECK_CUDA(cudaMemset(w, 0, w_bytes));
    }
    size_t call = 0;
    auto next_weights = [&] { return weights[call++ % weights.size()]; };
    // Column-major: Dᵀ[n, m] = W[n, k] (stored k × n, op T) · Xᵀ[k, m] (stored k × m, op N).
    cublasLtMatmulDesc_t desc = nullptr;
    CHECK_LT(api.cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CHECK_LT(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK_LT(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    const cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    CHECK_LT(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi));
    CHECK_LT(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &s.type, sizeof s.type));
    CHECK_LT(api.cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
    cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
    CHECK_LT(api.cublasLtMatrixLayoutCreate(&la, s.type, s.k, s.n, s.k));
    CHECK_LT(api.cublasLtMatrixLayoutCreate(&lb, s.type, s.k, s.m, s.k));
    CHECK_LT(api.cublasLtMatrixLayoutCreate(&ld, s.type, s.n, s.m, s.n));
    cublasLtMatmulPreference_t pref = nullptr;
    CHECK_LT(api.cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = kWorkspace;
    CHECK_LT(api.cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    const float alpha = 1.0f, beta = 0.0f;
    // Median over 15 rounds of 20 back-to-back calls of `once`, in µs per call.
    auto median_us = [&](const auto& once) {
      for (int i = 0; i < 20; ++i) once();  // warm-up
      std::vector<double> rounds;
      for (int round = 0; round < 15; ++round) {
        CHECK_CUDA(cudaEventRecord(t0, stream));
        for (int i = 0; i < 20; ++i) once();
        CHECK_CUDA(cudaEventRecord(t1, stream));
        CHECK_CUDA(cudaEventSynchronize(t1));
        float ms = 0;
        CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));
        rounds.push_back(ms * 1000.0 / 20);
      }
      std::sort(rounds.begin(), rounds.end());
      return rounds[rounds.size() / 2];
    };
    auto time_us = [&](const cublasLtMatmulHeuristicResult_t& h) {
      return median_us([&] {
        CHECK_LT(api.cublasLtMatmul(handle, desc, &alpha, next_weights(), la, x, lb, &beta, d, ld, d, ld, &h.algo,
                                    workspace, h.workspaceSize, stream));
      });
    };
    cublasLtMatmulHeuristicResult_t found[slimcuda::ops::kGemmCandidates] = {};
    int count = 0;
    CHECK_LT(api.cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, slimcuda::ops::kGemmCandidates,
                                                found, &count));
    Row row{s, count};
    row.weight_copies = copies;
    for (int r = 0; r < count; ++r) {
      const double us = time_us(found[r]);
      const auto reduction = config<uint32_t>(api, found[r].algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
      std::printf("%s %lld %lld %lld | %d %u %u %u %u | %.2f\n", type_name(s.type), static_cast<long long>(s.m),
                  static_cast<long long>(s.n), static_cast<long long>(s.k), r,
                  config<uint32_t>(api, found[r].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM), reduction,
                  config<uint32_t>(api, found[r].algo, CUBLASLT_ALGO_CONFIG_TILE_ID),
                  config<uint32_t>(api, found[r].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID), us);
      if (r == 0) row.first = us;
      row.fastest = std::min(row.fastest, us);
    }
    // What ops/gemm_cuda runs.
    if (count > 0) row.slimcuda = time_us(found[slimcuda::ops::choose_gemm_algo(api, found, count)]);
    if (s.decoder) {
      // The same GEMM on the GEMV: out[m, n] = x · wᵀ + bias, as gemm_cuda gives it.
      slimcuda::ops::GemvArgs g;
      g.type = slimcuda::ops::GemmElement::BFloat16;
      g.m = s.m, g.n = s.n, g.k = s.k;
      g.x = x, g.x_row_stride = s.k, g.w_row_stride = s.k;
      g.self = bias, g.self_strides[2] = 1, g.beta = 1.0f;
      g.out = d, g.out_strides[1] = s.n, g.out_strides[2] = 1;
      g.w = weights[0];
      CHECK_OK(slimcuda::ops::gemv_takes(g), "the GEMV taking a decoder shape");
      int device = 0;
      CHECK_CUDA(cudaGetDevice(&device));
      row.gemv = median_us([&] {
        g.w = next_weights();
        CHECK_OK(slimcuda::ops::launch_gemv(g, device, stream, "gemm_algos_benchmark") == slimcuda::Error::Ok,
                 "launch_gemv");
      });
    }
    rows.push_back(row);
    api.cublasLtMatmulPreferenceDestroy(pref);
    api.cublasLtMatrixLayoutDestroy(ld);
    api.cublasLtMatrixLayoutDestroy(lb);
    api.cublasLtMatrixLayoutDestroy(la);
    api.cublasLtMatmulDescDestroy(desc);
    CHECK_CUDA(cudaFree(x));
    for (void* w : weights) CHECK_CUDA(cudaFree(w));
    CHECK_CUDA(cudaFree(d));
    CHECK_CUDA(cudaFree(bias));
  }
  std::printf("\ndtype m n k | candidates | first us | slimcuda's choice us | fastest us\n");
  for (const Row& r : rows) {
    std::printf("%s %lld %lld %lld | %d | %.2f | %.2f | %.2f\n", type_name(r.shape.type),
                static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k),
                r.candidates, r.first, r.slimcuda, r.fastest);
  }
  std::printf(
      "\ndecode step, bfloat16, weights rotated over > 200 MB: dtype m n k | weight copies | cuBLASLt (slimcuda's "
      "choice) us GB/s | fastest candidate us | GEMV us GB/s | cuBLASLt / GEMV\n");
  for (const Row& r : rows) {
    if (!r.shape.decoder) continue;
    const double bytes = gemm_bytes(r.shape, type_size(r.shape.type));
    std::printf("%s %lld %lld %lld | %zu | %.2f %.0f | %.2f | %.2f %.0f | %.2f\n", type_name(r.shape.type),
                static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k),
                r.weight_copies, r.slimcuda, bytes / (r.slimcuda * 1e3), r.fastest, r.gemv, bytes / (r.gemv * 1e3),
                r.slimcuda / r.gemv);
  }
  CHECK_CUDA(cudaFree(workspace));
  api.cublasLtDestroy(handle);
  return 0;
}
