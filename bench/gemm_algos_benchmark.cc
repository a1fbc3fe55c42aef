// SPDX-License-Identifier: Apache-2.0
// gemm_algos_benchmark: which of cuBLASLt's heuristic candidates is fastest for the GEMMs
// small exported models make (nn.Linear: out[m, n] = x[m, k] · w[n, k]ᵀ + bias, as
// aoti_torch_cuda_addmm_out gives them to cuBLASLt: D = Wᵀ-major, bias epilogue). For each
// shape it asks cuBLASLt for up to 8 algorithms with slimcuda's preferences (4 MiB workspace,
// 256-byte alignment) and times each: CUDA events around 20 back-to-back calls, median of
// 15 rounds. It prints every candidate (rank, split-K count, reduction scheme, tile, µs),
// then per shape the time of cuBLASLt's first pick, of slimcuda's choice among them
// (ops/gemm_algo_choice.h: the first without in-place split-K reduction), and of the fastest.
// Usage: gemm_algos_benchmark   (needs a GPU and cuBLASLt; exits 2 without a GPU)
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <vector>

#include "bench/benchmark_checks.h"
#include "csrc/cuda_libs/cublaslt.h"
#include "csrc/ops/gemm/gemm_algo_choice.h"

namespace {

struct Shape {
  int64_t m, n, k;
  cudaDataType_t type;
};

// One shape's summary: cuBLASLt's first candidate, slimcuda's pick (-1: none), the fastest.
struct Row {
  Shape shape;
  int candidates = 0;
  double first = 0, slimcuda = -1, fastest = 1e30;
};

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
T config(const slimcuda::cuda_libs::CublasLtApi& api, const cublasLtMatmulAlgo_t& algo,
         cublasLtMatmulAlgoConfigAttributes_t a) {
  T v{};
  size_t written = 0;
  if (api.cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written) != CUBLAS_STATUS_SUCCESS) return T{};
  return v;
}

}  // namespace

int main() {
  require_gpu_or_exit("gemm_algos_benchmark");
  auto api_r = slimcuda::cuda_libs::cublaslt();
  CHECK_OK(api_r.ok(), "loading cuBLASLt");
  const slimcuda::cuda_libs::CublasLtApi& api = *api_r.value();
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
  // A 1B-class decoder's step (tools/aoti/decoder.py: d 2048, MLP 8192, vocab 32000) at batch
  // 1, 4 and 8: weight-bound GEMMs whose time is the weights' bytes over the bandwidth reached.
  for (int64_t m : {1, 4, 8}) {
    for (auto [n, k] : std::vector<std::pair<int64_t, int64_t>>{
             {6144, 2048}, {2048, 2048}, {8192, 2048}, {2048, 8192}, {32000, 2048}}) {
      shapes.push_back({m, n, k, CUDA_R_16BF});
    }
  }

  std::printf("dtype m n k | rank splitk reduction tile stages | us\n");
  std::vector<Row> rows;
  for (const Shape& s : shapes) {
    const size_t es = type_size(s.type);
    void *x = nullptr, *w = nullptr, *d = nullptr, *bias = nullptr;
    CHECK_CUDA(cudaMalloc(&x, s.m * s.k * es));
    CHECK_CUDA(cudaMalloc(&w, s.n * s.k * es));
    CHECK_CUDA(cudaMalloc(&d, s.m * s.n * es));
    CHECK_CUDA(cudaMalloc(&bias, s.n * es));
    CHECK_CUDA(cudaMemset(x, 0, s.m * s.k * es));
    CHECK_CUDA(cudaMemset(w, 0, s.n * s.k * es));
    CHECK_CUDA(cudaMemset(bias, 0, s.n * es));
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
    auto time_us = [&](const cublasLtMatmulHeuristicResult_t& h) {
      auto once = [&] {
        CHECK_LT(api.cublasLtMatmul(handle, desc, &alpha, w, la, x, lb, &beta, d, ld, d, ld, &h.algo, workspace,
                                    h.workspaceSize, stream));
      };
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
    cublasLtMatmulHeuristicResult_t found[slimcuda::ops::kGemmCandidates] = {};
    int count = 0;
    CHECK_LT(api.cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, slimcuda::ops::kGemmCandidates,
                                                found, &count));
    Row row{s, count};
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
    rows.push_back(row);
    api.cublasLtMatmulPreferenceDestroy(pref);
    api.cublasLtMatrixLayoutDestroy(ld);
    api.cublasLtMatrixLayoutDestroy(lb);
    api.cublasLtMatrixLayoutDestroy(la);
    api.cublasLtMatmulDescDestroy(desc);
    CHECK_CUDA(cudaFree(x));
    CHECK_CUDA(cudaFree(w));
    CHECK_CUDA(cudaFree(d));
    CHECK_CUDA(cudaFree(bias));
  }
  std::printf("\ndtype m n k | candidates | first us | slimcuda's choice us | fastest us | weights GB/s (choice)\n");
  for (const Row& r : rows) {
    // The weight matrix's bytes over slimcuda's time: what bounds a small-m GEMM.
    const double gbs =
        r.slimcuda > 0 ? static_cast<double>(r.shape.n * r.shape.k * type_size(r.shape.type)) / (r.slimcuda * 1e3) : 0;
    std::printf("%s %lld %lld %lld | %d | %.2f | %.2f | %.2f | %.0f\n", type_name(r.shape.type),
                static_cast<long long>(r.shape.m), static_cast<long long>(r.shape.n), static_cast<long long>(r.shape.k),
                r.candidates, r.first, r.slimcuda, r.fastest, gbs);
  }
  CHECK_CUDA(cudaFree(workspace));
  api.cublasLtDestroy(handle);
  return 0;
}
