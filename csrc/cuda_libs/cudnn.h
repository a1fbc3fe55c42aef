// SPDX-License-Identifier: Apache-2.0
#pragma once

// cuDNN 9, opened on first use (library_loader.h): a table of the functions slimcuda's
// convolutions call, typed from cudnn.h. Search: $SLIMCUDA_CUDNN_LIBRARY, beside
// libslimcuda.so, then the loader's path (soname libcudnn.so.9). libcudnn.so.9 finds its
// sub-libraries (libcudnn_graph, _ops, _cnn, _engines_*, _heuristic) beside itself.
//
// The cuDNN frontend (header-only, part 2's attention) built with
// NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING resolves every backend call with
// dlsym(cudnn_frontend::cudnn_dlhandle, ...), a global its user defines. slimcuda defines it
// here and sets it to the handle this loader opened, after the version check, so the
// frontend and slimcuda always use one and the same libcudnn (no second dlopen by soname,
// no RTLD_GLOBAL). Frontend code must call cudnn() before touching the frontend.

#include <cudnn.h>

#include "slimcuda/error.h"
#include "slimcuda/result.h"

namespace cudnn_frontend {
/// The frontend's dynamic-loading handle (see above): null until cudnn() succeeds.
extern void* cudnn_dlhandle;
}  // namespace cudnn_frontend

namespace slimcuda::cuda_libs {

#define SLIMCUDA_CUDNN_FUNCTIONS(X)               \
  X(cudnnGetVersion)                              \
  X(cudnnGetErrorString)                          \
  X(cudnnCreate)                                  \
  X(cudnnDestroy)                                 \
  X(cudnnSetStream)                               \
  X(cudnnCreateTensorDescriptor)                  \
  X(cudnnSetTensorNdDescriptor)                   \
  X(cudnnDestroyTensorDescriptor)                 \
  X(cudnnCreateFilterDescriptor)                  \
  X(cudnnSetFilterNdDescriptor)                   \
  X(cudnnDestroyFilterDescriptor)                 \
  X(cudnnCreateConvolutionDescriptor)             \
  X(cudnnSetConvolutionNdDescriptor)              \
  X(cudnnSetConvolutionGroupCount)                \
  X(cudnnSetConvolutionMathType)                  \
  X(cudnnDestroyConvolutionDescriptor)            \
  X(cudnnGetConvolutionForwardAlgorithm_v7)       \
  X(cudnnFindConvolutionForwardAlgorithmEx)       \
  X(cudnnGetConvolutionForwardWorkspaceSize)      \
  X(cudnnConvolutionForward)                      \
  X(cudnnGetConvolutionBackwardDataAlgorithm_v7)  \
  X(cudnnFindConvolutionBackwardDataAlgorithmEx)  \
  X(cudnnGetConvolutionBackwardDataWorkspaceSize) \
  X(cudnnConvolutionBackwardData)                 \
  X(cudnnAddTensor)

/// The resolved functions; immutable once loaded, shared by every thread.
struct CudnnApi {
#define SLIMCUDA_DECLARE_FN(name) decltype(&::name) name = nullptr;
  SLIMCUDA_CUDNN_FUNCTIONS(SLIMCUDA_DECLARE_FN)
#undef SLIMCUDA_DECLARE_FN
  size_t version = 0;      ///< cudnnGetVersion(), e.g. 91900
  void* handle = nullptr;  ///< the dlopen handle (also in cudnn_frontend::cudnn_dlhandle)
};

/// The minimum run-time version.
inline constexpr size_t kMinCudnnVersion = 90000;

/// The table, loading the library on the first call (once per process, thread-safe); a
/// failure is NotSupported with the reason in the last-error message,
/// remembered for later calls.
[[nodiscard]] Result<const CudnnApi*> cudnn() noexcept;

}  // namespace slimcuda::cuda_libs
