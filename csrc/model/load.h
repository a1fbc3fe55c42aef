// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "csrc/archive/pt2_archive.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/graph/graph_runner.h"
#include "csrc/model/extern_kernels.h"
#include "csrc/model/model.h"
#include "slimcuda/error.h"

namespace slimcuda {

// Loading a model: one entry for bytes and files, whatever the format. The format is
// recognised here (a zip is a `.pt2`, anything else must be a slimcuda package); the
// readers (csrc/archive/, csrc/package/) only read and check, and the policy — which
// device, what a library must look like before it is dlopen'ed, where the weights come
// from, what state a load owns — lives in this component (pt2_load.cc, Model::load).

/// What to load: `size` bytes at `data` (copied or viewed only during the call), or the
/// file at `path` (a `.pt2` is mapped read-only, a package read whole).
struct LoadSource {
  const uint8_t* data = nullptr;
  size_t size = 0;
  const char* path = nullptr;

  [[nodiscard]] static LoadSource bytes(const void* data, size_t size) noexcept {
    return LoadSource{static_cast<const uint8_t*>(data), size, nullptr};
  }
  [[nodiscard]] static LoadSource file(const char* path) noexcept { return LoadSource{nullptr, 0, path}; }
};

/// The entry layer's resolution of the caller stream for the model's device, called once
/// the device is known (caller_context's signature): the load's uploads go on that stream.
/// nullptr: none selected (the model's own stream).
using CallerContextFn = Error (*)(int device_index, StreamContext* out) noexcept;

/// How to load. device_type: -1 auto, 0 CPU, 1 CUDA (Model::check_device_type);
/// device_index -1: the current device; instances 0: the default (Model::kDefault*);
/// model_name: which model of a `.pt2` holding several (nullptr: the only one, else
/// "model"; packages hold one); graphs: CUDA graphs for runs (graph::GraphMode).
struct LoadOptions {
  int device_type = -1;
  int device_index = -1;
  int instances = 0;
  const char* model_name = nullptr;
  graph::GraphMode graphs = graph::GraphMode::Off;
  CallerContextFn caller_context = nullptr;
  /// Binds a .pt2's extern-kernel nodes (the proxy component's, passed down by the C ABI);
  /// nullptr: a model whose library calls the proxy executor is refused (NotSupported).
  BindExternKernelsFn bind_extern_kernels = nullptr;
};

/// Loads the model `source` holds. A null `out` or a source with neither bytes nor a path
/// -> InvalidArgument; the readers' and Model::load's errors otherwise. `*out` is reset
/// first and set only on success. May throw std::bad_alloc (the entry layer turns it into
/// a code).
[[nodiscard]] Error load_model(const LoadSource& source, const LoadOptions& options, std::unique_ptr<Model>* out);

/// The one place the format is recognised, for loading and describing alike: a zip (by its
/// first bytes) is opened as a `.pt2` (a file mapped read-only) and handed to `pt2`; anything
/// else is read (a file whole, bounded by kMaxPackageFileBytes) and handed to `package`. A
/// source with neither bytes nor a path -> InvalidArgument; the file errors of
/// open_regular_file. May throw std::bad_alloc.
using Pt2Reader = std::function<Error(const Pt2Archive& archive)>;
using PackageReader = std::function<Error(const uint8_t* data, size_t size)>;
[[nodiscard]] Error read_model_source(const LoadSource& source, const Pt2Reader& pt2, const PackageReader& package);

}  // namespace slimcuda
