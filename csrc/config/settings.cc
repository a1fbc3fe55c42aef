// SPDX-License-Identifier: Apache-2.0
// The table itself. Defaults and their measurements are explained where the settings are
// read (csrc/memory/staged_copy.cc, csrc/ops/...); docs/configuration.md is generated from
// this table (//csrc/config:config_doc) and checked against it.
#include "csrc/config/settings.h"

#include <algorithm>
#include <thread>

namespace slimcuda::config {
namespace {

uint64_t default_staging_threads() { return std::min(std::max(1u, std::thread::hardware_concurrency()), 8u); }

constexpr std::array<SettingInfo, kSettingCount> kTable = {{
    {Key::CachingAllocator, "SLIMCUDA_CACHING_ALLOCATOR", Type::Bool, "1", nullptr, true,
     "Cache device memory (one pool per GPU) and pinned host memory; 0 makes every allocation a `cudaMalloc` / "
     "`cudaHostAlloc` and turns staged copies off. Read once: memory a pool handed out must go back to it.",
     nullptr},
    {Key::StagingThreshold, "SLIMCUDA_STAGING_THRESHOLD", Type::Integer, "1048576", nullptr, false,
     "Bytes from which a copy between pageable host memory and a GPU is staged through pinned chunks; 0 turns "
     "staging off.",
     nullptr},
    {Key::StagingChunk, "SLIMCUDA_STAGING_CHUNK", Type::Integer, "4194304", nullptr, false,
     "Bytes per pinned chunk of a staged copy (clamped to 64 KiB .. 1 GiB; a copy smaller than four chunks uses "
     "a quarter of its size, at least 256 KiB).",
     nullptr},
    {Key::StagingBuffers, "SLIMCUDA_STAGING_BUFFERS", Type::Integer, "6", nullptr, false,
     "Pinned chunks in flight per staged copy (clamped to 1 .. 16).", nullptr},
    {Key::StagingThreads, "SLIMCUDA_STAGING_THREADS", Type::Integer, "min(8, hardware threads)", nullptr, false,
     "Host threads that share each chunk's memcpy in a staged copy (clamped to 1 .. 64).", &default_staging_threads},
    {Key::StagingFlags, "SLIMCUDA_STAGING_FLAGS", Type::Bool, "0", nullptr, false,
     "1: a staged copy enqueues every chunk's DMA at once, behind stream waits on flags the host threads set "
     "(needs the driver's stream memory operations; without them the event pipeline runs).",
     nullptr},
    {Key::Conv, "SLIMCUDA_CONV", Type::Enum, "auto", kConvWords, false,
     "Which cuDNN API runs convolutions: `auto` (the graph API, the legacy API where it declines), `frontend` (the "
     "graph API or an error), `legacy` (the legacy API only).",
     nullptr},
    {Key::CudnnBenchmark, "SLIMCUDA_CUDNN_BENCHMARK", Type::Bool, "0", nullptr, false,
     "1: the legacy cuDNN API picks each convolution shape's algorithm by running them (as "
     "`torch.backends.cudnn.benchmark`; synchronizes once per new shape, so no graph capture) instead of by "
     "cuDNN's heuristics. Applies to shapes first seen after a change.",
     nullptr},
    {Key::Attention, "SLIMCUDA_ATTENTION", Type::Enum, "auto", kAttentionWords, false,
     "Which attention implementation runs: `auto` (cuDNN where it serves the problem, else slimcuda's kernel), "
     "`kernel` (never cuDNN), `cudnn` (cuDNN or an error).",
     nullptr},
    {Key::GemmPlain, "SLIMCUDA_GEMM_PLAIN", Type::Bool, "0", nullptr, false,
     "1: every GEMM runs on contiguous copies of its factors into a contiguous temporary (a diagnostic: a model "
     "right with it and wrong without has met a layout or epilogue the direct path gets wrong).",
     nullptr},
    {Key::CpuThreads, "SLIMCUDA_CPU_THREADS", Type::Integer, "0", nullptr, false,
     "Threads of slimcuda's CPU ops (GEMMs, convolutions and attention: OpenBLAS and OpenMP); 0: OpenMP's own "
     "count (`OMP_NUM_THREADS`, else every hardware thread). A CPU export's generated kernels keep the count "
     "PyTorch compiled into them (the exporting machine's).",
     nullptr},
    {Key::CublasLtLibrary, "SLIMCUDA_CUBLASLT_LIBRARY", Type::Path, "", nullptr, true,
     "Full path of the cuBLASLt to open instead of searching (beside libslimcuda.so, then the dynamic loader's "
     "path); a failure there is final. Read once, when cuBLASLt is first opened.",
     nullptr},
    {Key::CudnnLibrary, "SLIMCUDA_CUDNN_LIBRARY", Type::Path, "", nullptr, true,
     "Full path of the cuDNN to open instead of searching (as for cuBLASLt). Read once, when cuDNN is first "
     "opened.",
     nullptr},
    {Key::LogLevel, "SLIMCUDA_LOG_LEVEL", Type::Enum, "warning", kLogLevelWords, false,
     "The least severe message the library's log passes on (to stderr, or to the callback set with "
     "`slimcuda_set_log_callback` / Go's `SetLogger`).",
     nullptr},
    {Key::Tmpdir, "TMPDIR", Type::Path, "/tmp", nullptr, false,
     "Folder for a model library's temporary file where an anonymous memfd cannot be loaded (no `/proc`); the "
     "file is unlinked as soon as it is loaded.",
     nullptr},
}};

constexpr bool in_key_order() {
  for (size_t i = 0; i < kSettingCount; ++i) {
    if (static_cast<size_t>(kTable[i].key) != i) return false;
  }
  return true;
}
static_assert(in_key_order(), "the table's rows are in Key order");

}  // namespace

const std::array<SettingInfo, kSettingCount>& settings() noexcept { return kTable; }

const SettingInfo* find(std::string_view name) noexcept {
  for (const SettingInfo& s : kTable) {
    if (name == s.name) return &s;
  }
  return nullptr;
}

}  // namespace slimcuda::config
