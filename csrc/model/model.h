#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <cuda_runtime_api.h>

#include "csrc/cuda/stream_context.h"
#include "csrc/model/library.h"
#include "csrc/package/model_package.h"
#include "csrc/tensor/slim_tensor.h"
#include "slimcuda/error.h"

namespace slimcuda {

/// A loaded model: one library of a package, loaded from memory as its own object
/// (ModelLibrary: a memfd, no file ever exists, nothing is left behind), with its
/// AOTInductor container. Its aoti_torch_* calls resolve to this libslimcuda.so.
///
/// Untrusted input: the package's metadata, the library's ELF shape and its integrity hash
/// are checked before anything is loaded; the library's code is not and cannot be —
/// loading runs its ELF constructors with this process's privileges, as loading any plugin
/// does. Load only models you would run as code.
class Model {
 public:
  /// device_type -1 picks CUDA when a GPU and a CUDA library are there, else CPU.
  /// device_index -1: the current device. Load errors: no library for the device ->
  /// NotSupported; a library that does not load, lacks the container ABI or whose
  /// container cannot be created -> InvalidProgram; out of file descriptors ->
  /// OutOfResources.
  [[nodiscard]] static Error load(const ModelPackage& package, int device_type, int device_index,
                                  std::unique_ptr<Model>* out, const char* function) noexcept;
  ~Model();
  // One container and one dlopen handle each; copies would free them twice.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) = delete;
  Model& operator=(Model&&) = delete;

  [[nodiscard]] const MethodSpec& method() const noexcept { return method_; }
  [[nodiscard]] Device device() const noexcept { return device_; }

  /// Runs "forward". Inputs are checked against the manifest (dtype, rank, sizes within
  /// bounds, device, and for CUDA that the data really is device memory of the model's
  /// device, dim order when declared) -> InvalidArgument; outputs the model returns are
  /// checked too -> InvalidProgram. `outputs` receives new tensors (the caller deletes
  /// them). CUDA models run on ctx's stream when one is selected (the entry point resolved
  /// ctx for the model's device; the call returns
  /// once the work is enqueued) and otherwise on the model's own stream, waiting for it
  /// before returning. An output that borrows memory of the model (its library's static
  /// data, its container's constants) keeps the library and container alive as long as it
  /// lives, so it stays readable after the Model is destroyed.
  [[nodiscard]] Error run(SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs, size_t num_outputs,
                          const StreamContext& ctx, const char* function) noexcept;

 private:
  Model() = default;

  using CreateFn = int32_t (*)(void**, size_t, const char*, const char*);
  using DeleteFn = int32_t (*)(void*);
  using CountFn = int32_t (*)(void*, size_t*);
  using RunFn = int32_t (*)(void*, void**, size_t, void**, size_t, void*, void*);

  // The library and the container it created, released together when the Model and every
  // output borrowing from them are gone (container first, then dlclose).
  struct Loaded {
    std::shared_ptr<ModelLibrary> library;
    void* container = nullptr;
    DeleteFn destroy = nullptr;
    ~Loaded() {
      if (container != nullptr && destroy != nullptr) destroy(container);
    }
  };

  std::shared_ptr<Loaded> loaded_;
  RunFn run_ = nullptr;
  cudaStream_t stream_ = nullptr;  // the model's own stream (CUDA models)
  bool own_stream_ = false;
  Device device_;
  MethodSpec method_;
};

/// Checks one tensor against its spec (the runner's input and output checks).
[[nodiscard]] Error check_tensor_against(const SlimTensor& t, const TensorSpec& spec, Device model_device,
                                         const char* what, size_t index, Error on_mismatch,
                                         const char* function) noexcept;

}  // namespace slimcuda
