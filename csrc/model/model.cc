// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/model.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "csrc/core/model_checks.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/retire_stream.h"
#include "csrc/model/weights_cache.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/handle_adoption.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// Beyond these a container's report is not a model's (a .pt2 has no manifest to cap them).
constexpr size_t kMaxIo = 4096;
constexpr size_t kMaxNameLength = 1024;

// Strides a dense tensor of `sizes` has when laid out in `dim_order` (outermost first).
std::vector<int64_t> strides_for_dim_order(const std::vector<int64_t>& sizes, const std::vector<uint8_t>& order) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t k = order.size(); k-- > 0;) {
    strides[order[k]] = s;
    s *= sizes[order[k]] > 1 ? sizes[order[k]] : 1;
  }
  return strides;
}

std::string shape(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The dtype, rank and sizes of `t` against a known spec.
Error check_shape(const SlimTensor& t, const TensorSpec& spec, const char* what, size_t index,
                  Error on_mismatch) noexcept {
  const char* name = spec.name.c_str();
  SLIMCUDA_CHECK_OR_RETURN(t.dtype() == spec.dtype, on_mismatch, "%s %zu '%s': dtype %s, want %s", what, index, name,
                           scalar_type_name(t.dtype()), scalar_type_name(spec.dtype));
  SLIMCUDA_CHECK_OR_RETURN(t.dim() == static_cast<int64_t>(spec.sizes.size()), on_mismatch,
                           "%s %zu '%s': rank %lld, want %zu", what, index, name, static_cast<long long>(t.dim()),
                           spec.sizes.size());
  for (size_t d = 0; d < spec.sizes.size(); ++d) {
    const int64_t got = t.sizes()[d], want = spec.sizes[d];
    const int64_t low = spec.min_sizes.empty() ? 0 : spec.min_sizes[d];
    const bool fits = spec.dynamism == Dynamism::Static           ? got == want
                      : spec.dynamism == Dynamism::DynamicBounded ? (got >= low && got <= want)
                                                                  : true;
    if (!fits) {
      const bool bounded = spec.dynamism == Dynamism::DynamicBounded;
      return set_last_error(
          on_mismatch, "%s %zu '%s': shape %s, want %s%s%s", what, index, name, shape(t.sizes()).c_str(),
          bounded ? "at most " : "", shape(spec.sizes).c_str(),
          bounded && !spec.min_sizes.empty() ? (" and at least " + shape(spec.min_sizes)).c_str() : "");
    }
  }
  return Error::Ok;
}

}  // namespace

Error check_tensor_against(const SlimTensor& t, const TensorSpec& spec, Device model_device, const char* what,
                           size_t index, Error on_mismatch) noexcept {
  const char* name = spec.name.c_str();
  if (spec.known) SLIMCUDA_RETURN_IF_ERROR(check_shape(t, spec, what, index, on_mismatch));
  const Device want_device{spec.device.type, spec.device.index == -1 ? model_device.index : spec.device.index};
  const Device got = t.device();
  SLIMCUDA_CHECK_OR_RETURN(
      got.type == want_device.type && (got.type == DeviceType::CPU || got.index == want_device.index), on_mismatch,
      "%s %zu '%s': on %s:%d, want %s:%d", what, index, name, got.is_cuda() ? "cuda" : "cpu", got.index,
      want_device.is_cuda() ? "cuda" : "cpu", want_device.index);
  // Memory slimcuda's CUDA allocator handed out for this device is device memory by
  // construction; anything else (a blob the caller tagged cuda) is asked of CUDA — one
  // driver call per tensor that a run from many threads would otherwise pay every time.
  const bool ours = t.storage() != nullptr && t.storage()->kind() == Storage::Kind::Device;
  if (got.is_cuda() && t.data_ptr() != nullptr && !ours) {
    // The tag is not enough: the memory must really be this device's.
    cudaPointerAttributes attr{};
    const cudaError_t err = cudaPointerGetAttributes(&attr, t.data_ptr());
    if (err != cudaSuccess) (void)cudaGetLastError();
    SLIMCUDA_CHECK_OR_RETURN(err == cudaSuccess &&
                                 (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) &&
                                 attr.device == got.index,
                             on_mismatch, "%s %zu '%s' is tagged cuda:%d but its data is not that device's memory",
                             what, index, name, got.index);
  }
  if (spec.known && !spec.dim_order.empty()) {
    const std::vector<int64_t> want = strides_for_dim_order(t.sizes(), spec.dim_order);
    for (size_t d = 0; d < want.size(); ++d) {
      SLIMCUDA_CHECK_OR_RETURN(t.sizes()[d] <= 1 || t.strides()[d] == want[d], on_mismatch,
                               "%s %zu '%s': strides %s do not follow the declared dim order", what, index, name,
                               shape(t.strides()).c_str());
    }
  }
  return Error::Ok;
}

Error Model::check_device_type(int device_type) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(device_type >= -1 && device_type <= 1, Error::InvalidArgument,
                           "device type %d (want -1 auto, 0 CPU, 1 CUDA)", device_type);
  return Error::Ok;
}

Error Model::load(const ModelPackage& package, int device_type, int device_index, int instances,
                  std::unique_ptr<Model>* out, graph::GraphMode graphs) noexcept {
  try {
    SLIMCUDA_RETURN_IF_ERROR(check_device_type(device_type));
    SLIMCUDA_CHECK_OR_RETURN(instances >= 0 && instances <= kMaxInstances, Error::InvalidArgument,
                             "%d instances (want 0 for the default, or 1 to %d)", instances, kMaxInstances);
    if (device_type == -1) {
      device_type = (package.library(DeviceType::CUDA) != nullptr && cuda::device_count() > 0) ? 1 : 0;
    }
    // instances stays 0 for the default: load_library resolves it, and a model with state
    // gets one instance by default, where asking for more is refused.
    const LibrarySpec* lib = package.library(static_cast<DeviceType>(device_type));
    SLIMCUDA_CHECK_OR_RETURN(lib != nullptr, Error::NotSupported, "the package has no %s library",
                             device_type == 1 ? "CUDA" : "CPU");
    const MethodSpec* forward = nullptr;
    for (const MethodSpec& m : lib->methods) {
      if (m.name == "forward") forward = &m;
    }
    SLIMCUDA_CHECK_OR_RETURN(forward != nullptr, Error::InvalidProgram, "no method \"forward\"");

    std::unique_ptr<Model> m;
    SLIMCUDA_RETURN_IF_ERROR(load_library(lib->so.data(), lib->so.size(), static_cast<DeviceType>(device_type),
                                          device_index, instances, forward, nullptr, &m, graphs));
    // No wrapper source beside a package's library: only its kinds say what it writes.
    SLIMCUDA_RETURN_IF_ERROR(m->prepare_state(nullptr, StreamContext::unselected(-1)));
    *out = std::move(m);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory loading the model");
  }
}

Error Model::place(DeviceType type, int device_index, std::string* device_str) {
  if (type != DeviceType::CUDA) {
    SLIMCUDA_CHECK_OR_RETURN(device_index == -1 || device_index == 0, Error::InvalidArgument, "CPU device index %d",
                             device_index);
    device_ = Device{DeviceType::CPU, -1};
    *device_str = "cpu";
    return Error::Ok;
  }
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
  device_ = Device{DeviceType::CUDA, static_cast<DeviceIndex>(device)};
  *device_str = "cuda:" + std::to_string(device);
  cuda::DeviceGuard guard(device);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  own_stream_ = true;
  return Error::Ok;
}

Error Model::create_container(CreateFn create, DeleteFn destroy, int instances, const std::string& device_str) {
  clear_last_error();  // what the model's shim calls report, if anything, goes into ours
  void* container = nullptr;
  const int32_t rc = create(&container, static_cast<size_t>(instances), device_str.c_str(), nullptr);
  if (container != nullptr) {
    loaded_->container = container;
    loaded_->destroy = destroy;  // deleted with the model, also if a check after this fails
  }
  if (rc != 0) {
    const std::string why = last_error_message();
    return set_last_error(Error::InvalidProgram,
                          "AOTInductorModelContainerCreateWithDevice(%s) failed with error %d%s%s", device_str.c_str(),
                          rc, why.empty() ? "" : ": ", why.c_str());
  }
  SLIMCUDA_CHECK_OR_RETURN(container != nullptr, Error::InvalidProgram,
                           "AOTInductorModelContainerCreateWithDevice(%s) reported success but returned no "
                           "container",
                           device_str.c_str());
  return Error::Ok;
}

void Model::enable_graphs(CreateFn create, DeleteFn destroy, const std::string& device_str, graph::GraphMode graphs) {
  graph::ContainerAbi abi;
  abi.create = create;
  abi.destroy = destroy;
  abi.run_single_threaded = reinterpret_cast<graph::ContainerAbi::RunFn>(
      loaded_->library->symbol("AOTInductorModelContainerRunSingleThreaded"));
  abi.device_str = device_str;
  abi.proxy_executor = proxy_handle();
  Model* self = this;
  // The capture container starts without the weights attach_constants gave the model's.
  abi.prepare = [self](void* container) { return self->share_constants_with(container); };
  abi.save_state = [self](cudaStream_t stream, std::shared_ptr<Storage>* saved) {
    return self->loaded_->state != nullptr ? self->loaded_->state->save(stream, saved) : Error::Ok;
  };
  abi.restore_state = [self](cudaStream_t stream, const Storage& saved) {
    return self->loaded_->state != nullptr ? self->loaded_->state->restore(stream, saved) : Error::Ok;
  };
  graph_abi_ = std::move(abi);
  graph_mode_ = graphs;
  make_graphs();
}

Error Model::load_library(const uint8_t* so, size_t size, DeviceType type, int device_index, int instances,
                          const MethodSpec* declared, const DescribeInputs& describe, std::unique_ptr<Model>* out,
                          graph::GraphMode graphs, std::shared_ptr<const ExternKernels> externs) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(instances >= 0 && instances <= kMaxInstances, Error::InvalidArgument,
                             "%d instances (want 0 for the default, or 1 to %d)", instances, kMaxInstances);
    const bool on_cuda = type == DeviceType::CUDA;
    const int requested = instances;
    if (instances == 0) instances = on_cuda ? kDefaultCudaInstances : kDefaultCpuInstances;
    std::unique_ptr<Model> m(new Model());
    m->requested_instances_ = requested;
    if (declared != nullptr) m->method_ = *declared;
    m->method_.name = "forward";
    m->slots_ = std::make_unique<InstanceSlots>(static_cast<size_t>(instances));
    std::string device_str;
    SLIMCUDA_RETURN_IF_ERROR(m->place(type, device_index, &device_str));
    m->loaded_ = std::make_shared<Loaded>();
    if (on_cuda) m->loaded_->device = m->device_.index;
    m->loaded_->externs = std::move(externs);
    SLIMCUDA_RETURN_IF_ERROR(ModelLibrary::load(so, size, &m->loaded_->library));
    const ModelLibrary& library = *m->loaded_->library;
    auto create = reinterpret_cast<CreateFn>(library.symbol("AOTInductorModelContainerCreateWithDevice"));
    auto destroy = reinterpret_cast<DeleteFn>(library.symbol("AOTInductorModelContainerDelete"));
    m->run_ = reinterpret_cast<RunFn>(library.symbol("AOTInductorModelContainerRun"));
    auto num_inputs = reinterpret_cast<CountFn>(library.symbol("AOTInductorModelContainerGetNumInputs"));
    auto num_outputs = reinterpret_cast<CountFn>(library.symbol("AOTInductorModelContainerGetNumOutputs"));
    SLIMCUDA_CHECK_OR_RETURN(create && destroy && m->run_ && num_inputs && num_outputs, Error::InvalidProgram,
                             "the library lacks the AOTInductor container ABI (AOTInductorModelContainer*)");
    SLIMCUDA_RETURN_IF_ERROR(m->create_container(create, destroy, instances, device_str));
    void* container = m->loaded_->container;
    size_t n_in = 0, n_out = 0;
    SLIMCUDA_CHECK_OR_RETURN(num_inputs(container, &n_in) == 0 && num_outputs(container, &n_out) == 0,
                             Error::InvalidProgram, "the container does not report its inputs and outputs");
    if (declared != nullptr) {
      SLIMCUDA_CHECK_OR_RETURN(n_in == declared->inputs.size() && n_out == declared->outputs.size(),
                               Error::InvalidProgram,
                               "the library has %zu inputs and %zu outputs; the manifest declares %zu and %zu", n_in,
                               n_out, declared->inputs.size(), declared->outputs.size());
    } else {
      SLIMCUDA_RETURN_IF_ERROR(m->describe_from_container(n_in, n_out, describe));
    }
    if (on_cuda && graphs != graph::GraphMode::Off) m->enable_graphs(create, destroy, device_str, graphs);
    *out = std::move(m);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory loading the model");
  }
}

Error Model::describe_from_container(size_t n_in, size_t n_out, const DescribeInputs& describe) {
  SLIMCUDA_CHECK_OR_RETURN(n_in <= kMaxIo && n_out <= kMaxIo, Error::InvalidProgram,
                           "the container reports %zu inputs and %zu outputs (at most %zu each)", n_in, n_out, kMaxIo);
  using NameFn = int32_t (*)(void*, size_t, const char**);
  const ModelLibrary& library = *loaded_->library;
  auto input_name = reinterpret_cast<NameFn>(library.symbol("AOTInductorModelContainerGetInputName"));
  auto output_name = reinterpret_cast<NameFn>(library.symbol("AOTInductorModelContainerGetOutputName"));
  auto name_of = [&](NameFn fn, size_t i, const char* fallback) {
    const char* n = nullptr;
    if (fn != nullptr && fn(loaded_->container, i, &n) == 0 && n != nullptr) {
      return std::string(n, strnlen(n, kMaxNameLength));
    }
    return std::string(fallback) + std::to_string(i);
  };
  std::vector<TensorSpec> inputs;
  bool described = false;
  if (describe) {
    const Error e = describe(n_in, &inputs);
    if (e == Error::Ok) {
      described = true;
    } else if (e == Error::NotFound) {
      clear_last_error();  // nothing to learn: the inputs stay unknown
    } else {
      return e;
    }
  }
  if (!described) {
    inputs.assign(n_in, TensorSpec{});
    for (TensorSpec& s : inputs) {
      s.known = false;
      s.device = Device{device_.type, -1};
    }
  }
  SLIMCUDA_CHECK_OR_RETURN(inputs.size() == n_in, Error::InvalidProgram, "%zu input specs for %zu inputs",
                           inputs.size(), n_in);
  for (size_t i = 0; i < n_in; ++i) {
    if (input_name != nullptr || inputs[i].name.empty()) inputs[i].name = name_of(input_name, i, "input");
  }
  method_.inputs = std::move(inputs);
  method_.outputs.resize(n_out);
  for (size_t i = 0; i < n_out; ++i) {
    method_.outputs[i].name = name_of(output_name, i, "output");
    method_.outputs[i].known = false;
    method_.outputs[i].device = Device{device_.type, -1};
  }
  return Error::Ok;
}

void Model::make_graphs() {
  Model* self = this;
  graphs_ = std::make_unique<graph::GraphRunner>(
      graph_abi_, std::shared_ptr<void>(loaded_->library), device_.index, slots_->count(), graph_mode_,
      [self](const SlimTensor& t, size_t i) {
        return check_tensor_against(t, self->method_.outputs[i], self->device_, "output", i, Error::InvalidProgram);
      });
}

Model::~Model() {
  graphs_.reset();  // waits for the graphs' last replays; its container goes before the library
  if (state_fence_ != nullptr && cudaEventDestroy(state_fence_) != cudaSuccess) (void)cudaGetLastError();
  loaded_.reset();  // container and library go now, or with the last output borrowing from them
  if (own_stream_) {
    memory::retire_stream(stream_);  // cached blocks (outputs, too) must not keep its address
    if (cudaStreamDestroy(stream_) != cudaSuccess) (void)cudaGetLastError();
  }
}

Error Model::container_constants(std::vector<ContainerConstant>* out) const noexcept {
  const ContainerConstantsApi api =
      ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
  return read_container_constants(api, loaded_->container, out);
}

Error Model::attach_constants(const std::vector<ConstantEntry>& entries, const std::string& identity,
                              const StreamContext& ctx) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(!constants_.has_value(), Error::InvalidState, "the model's constants were attached already");
  const ContainerConstantsApi api =
      ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
  AttachedConstants attached;
  SLIMCUDA_RETURN_IF_ERROR(
      slimcuda::attach_constants(api, loaded_->container, device_, identity, entries, ctx, stream_, &attached));
  loaded_->weights = attached.keep_alive;
  attached.keep_alive.reset();  // one owner: the container's Loaded
  if (attached.adopted != nullptr) {
    try {
      loaded_->adopted.push_back(std::move(attached.adopted));
    } catch (const std::bad_alloc&) {
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    }
  }
  constants_ = std::move(attached);
  return Error::Ok;
}

Error Model::load_constants_from_blob(const uint8_t* blob, uint64_t size) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(!constants_.has_value(), Error::InvalidState, "the model's constants were attached already");
  SLIMCUDA_CHECK_OR_RETURN(blob != nullptr || size == 0, Error::InvalidArgument, "null blob");
  using FromBlobFn = int32_t (*)(void*, const uint8_t*);
  const auto from_blob =
      reinterpret_cast<FromBlobFn>(loaded_->library->symbol("AOTInductorModelUpdateConstantsFromBlob"));
  SLIMCUDA_CHECK_OR_RETURN(from_blob != nullptr, Error::NotSupported,
                           "the model keeps constants on the CPU and the GPU, which its container takes only from the "
                           "weights blob, and its library has no AOTInductorModelUpdateConstantsFromBlob");
  try {
    std::optional<cuda::DeviceGuard> guard;
    if (device_.is_cuda()) {
      guard.emplace(device_.index);
      SLIMCUDA_RETURN_IF_ERROR(guard->error());
    }
    clear_last_error();  // what the container's shim calls report, if anything, goes into ours
    const int32_t rc = from_blob(loaded_->container, blob);
    if (rc != 0) {
      const std::string why = last_error_message();
      return set_last_error(Error::InvalidProgram,
                            "the container could not load its constants from the weights blob "
                            "(AOTInductorModelUpdateConstantsFromBlob: error %d)%s%s",
                            rc, why.empty() ? "" : ": ", why.c_str());
    }
    // A library built without the external-weights path makes that call a no-op: every
    // constant that needs bytes must now be there.
    const ContainerConstantsApi api =
        ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
    std::vector<ContainerConstant> constants;
    SLIMCUDA_RETURN_IF_ERROR(read_container_constants(api, loaded_->container, &constants));
    std::vector<const SlimTensor*> theirs;
    SLIMCUDA_RETURN_IF_ERROR(extract_container_constants(api, loaded_->container, constants, &theirs));
    for (size_t i = 0; i < constants.size(); ++i) {
      SLIMCUDA_CHECK_OR_RETURN(constants[i].from_folded || constants[i].data_size == 0 || theirs[i] != nullptr,
                               Error::InvalidProgram,
                               "the container did not load constant '%s' from the weights blob "
                               "(AOTInductorModelUpdateConstantsFromBlob did nothing)",
                               constants[i].name.c_str());
    }
    AttachedConstants attached;
    attached.path = ConstantsPath::ContainerBlob;
    attached.bytes = size;
    constants_ = std::move(attached);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error Model::share_constants_with(void* container) const noexcept {
  SLIMCUDA_CHECK_OR_RETURN(!stateful_ || loaded_->state != nullptr, Error::NotSupported,
                           "the model's state stays inside its container (its library cannot show or take its "
                           "constants): a second container would keep a state of its own");
  const ContainerConstantsApi api =
      ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
  if (loaded_->weights != nullptr) {  // else the library's own weights: each container has them
    // Every constant when attached from the archive; a swapped set leaves the state out.
    SLIMCUDA_RETURN_IF_ERROR(
        hand_to(api, container, *static_cast<const DeviceWeights*>(loaded_->weights.get()), !swapped_));
  } else {
    SLIMCUDA_CHECK_OR_RETURN(!constants_.has_value(), Error::NotSupported,
                             "the model's constants were copied into its container (%s): a second container would "
                             "need a copy of its own",
                             constants_path_name(constants_->path));
  }
  // The state over them: every container of this load writes one.
  return loaded_->state != nullptr ? hand_to(api, container, loaded_->state->current(), false) : Error::Ok;
}

Error Model::hand_to(const ContainerConstantsApi& api, void* container, const DeviceWeights& weights,
                     bool full) const noexcept {
  ConstantsPath path = ConstantsPath::UserManagedPairs;
  std::shared_ptr<const void> adopted;
  const Error e = hand_over_constants(api, container, weights, &path, &adopted, full);
  if (adopted != nullptr) {
    try {
      std::lock_guard<std::mutex> lock(loaded_->adopted_mu);
      loaded_->adopted.push_back(std::move(adopted));
    } catch (const std::bad_alloc&) {
      // Not kept: the handles are deleted now; the container is refused by the caller.
      return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
    }
  }
  return e;
}

Error Model::check_run_args(SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs,
                            size_t num_outputs) const noexcept {
  SLIMCUDA_CHECK_OR_RETURN(num_inputs == method_.inputs.size(), Error::InvalidArgument,
                           "%zu inputs, the model takes %zu", num_inputs, method_.inputs.size());
  SLIMCUDA_CHECK_OR_RETURN(num_outputs == method_.outputs.size(), Error::InvalidArgument,
                           "room for %zu outputs, the model returns %zu", num_outputs, method_.outputs.size());
  SLIMCUDA_CHECK_OR_RETURN((inputs != nullptr || num_inputs == 0) && (outputs != nullptr || num_outputs == 0),
                           Error::InvalidArgument, "null inputs or outputs array");
  for (size_t i = 0; i < num_inputs; ++i) {
    SLIMCUDA_CHECK_OR_RETURN(inputs[i] != nullptr, Error::InvalidArgument, "input %zu is null", i);
    SLIMCUDA_RETURN_IF_ERROR(
        check_tensor_against(*inputs[i], method_.inputs[i], device_, "input", i, Error::InvalidArgument));
  }
  return Error::Ok;
}

Error Model::run(SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs, size_t num_outputs,
                 const StreamContext& ctx) noexcept {
  try {
    SLIMCUDA_RETURN_IF_ERROR(check_run_args(inputs, num_inputs, outputs, num_outputs));
    void* stream = nullptr;
    const bool on_caller_stream = device_.is_cuda() && ctx.is_selected();
    std::optional<cuda::DeviceGuard> guard;
    if (device_.is_cuda()) {
      SLIMCUDA_CHECK_OR_RETURN(!ctx.is_selected() || ctx.device() == device_.index, Error::InvalidArgument,
                               "the caller stream belongs to device %d, the model to device %d", ctx.device(),
                               device_.index);
      stream = on_caller_stream ? ctx.stream() : stream_;
      guard.emplace(device_.index);
      SLIMCUDA_RETURN_IF_ERROR(guard->error());
    }
    // Every output is owned here until the last check passes: any failure below drops them.
    Outputs out(num_outputs);
    const uint64_t checks_before = check_failure_count();
    SLIMCUDA_RETURN_IF_ERROR(enqueue(inputs, num_inputs, &out, stream));
    // A check that failed inside the model's parallel code could not stop it (model_checks.h):
    // its outputs are not to be trusted.
    SLIMCUDA_CHECK_OR_RETURN(check_failure_count() == checks_before, Error::InvalidArgument,
                             "the model's Run failed: %s", last_check_failure().c_str());
    SLIMCUDA_RETURN_IF_ERROR(check_outputs(out));
    if (device_.is_cuda() && !on_caller_stream) {
      // Our own stream: the outputs are ready when run returns.
      SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(stream_, device_.index));
    }
    keep_owners(&out);
    for (size_t i = 0; i < num_outputs; ++i) outputs[i] = out[i].release();
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error Model::enqueue(SlimTensor* const* inputs, size_t num_inputs, Outputs* out, void* stream) {
  const size_t num_outputs = out->size();
  std::vector<void*> handles(num_outputs, nullptr);
  clear_last_error();  // what the model's shim calls report, if anything, goes into ours
  int32_t rc = 0;
  {
    // A free instance in the container while we hold it. On a caller stream the slot goes back
    // once the work is enqueued; AOTInductor keeps that instance pending until its GPU work is
    // done, so the (N+1)th caller may wait inside the container.
    InstanceSlot slot(*slots_);
    // A model with state: after the previous run or state operation, whatever its stream.
    if (state_fence_ != nullptr) {
      SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), state_fence_, 0));
    }
    bool replayed = false;
    if (graphs_ != nullptr) {
      SlimTensor* made[graph::GraphRunner::kMaxOutputs] = {};
      SLIMCUDA_RETURN_IF_ERROR(graphs_->run(slot.index(), inputs, num_inputs, made, num_outputs,
                                            static_cast<cudaStream_t>(stream), &replayed));
      for (size_t i = 0; replayed && i < num_outputs; ++i) handles[i] = made[i];
    }
    if (!replayed) {
      // The container steals the input handles: new handles to the same tensors, ours until
      // it takes them.
      std::vector<std::unique_ptr<SlimTensor>> copies;
      copies.reserve(num_inputs);
      for (size_t i = 0; i < num_inputs; ++i) copies.push_back(std::make_unique<SlimTensor>(*inputs[i]));
      std::vector<void*> in(num_inputs, nullptr);
      for (size_t i = 0; i < num_inputs; ++i) in[i] = copies[i].release();
      rc = run_(loaded_->container, in.data(), num_inputs, handles.data(), num_outputs, stream, proxy_handle());
    }
    for (size_t i = 0; i < num_outputs; ++i) (*out)[i].reset(static_cast<SlimTensor*>(handles[i]));
    if (state_fence_ != nullptr) {
      SLIMCUDA_CUDA_TRY(cudaEventRecord(state_fence_, static_cast<cudaStream_t>(stream)));
    }
  }
  return rc != 0 ? run_failure(rc, stream) : Error::Ok;
}

Error Model::run_failure(int32_t rc, void* stream) const {
  const std::string why = last_error_message();
  // A kernel of the model's that faulted (an index past a cache) leaves the context lost:
  // say so, and every later call on the device says it too (cuda::check_not_lost).
  if (device_.is_cuda() && cuda::note_if_sticky(cudaStreamQuery(static_cast<cudaStream_t>(stream)), device_.index)) {
    (void)cudaGetLastError();
    const Error lost = cuda::check_not_lost(device_.index);
    const std::string said = last_error_message();
    return set_last_error(lost, "the model's Run failed with %d%s%s; %s", rc, why.empty() ? "" : ": ", why.c_str(),
                          said.c_str());
  }
  return set_last_error(Error::InvalidProgram, "the model's Run failed with %d%s%s", rc, why.empty() ? "" : ": ",
                        why.c_str());
}

Error Model::check_outputs(const Outputs& out) const noexcept {
  for (size_t i = 0; i < out.size(); ++i) {
    SLIMCUDA_CHECK_OR_RETURN(out[i] != nullptr, Error::InvalidProgram, "the model returned no output %zu", i);
    // An output nothing describes (a .pt2) is the model's to shape.
    if (method_.outputs[i].known) {
      SLIMCUDA_RETURN_IF_ERROR(
          check_tensor_against(*out[i], method_.outputs[i], device_, "output", i, Error::InvalidProgram));
    }
  }
  return Error::Ok;
}

void Model::keep_owners(Outputs* out) const {
  const auto* weights = static_cast<const DeviceWeights*>(loaded_->weights.get());  // attached, or null
  for (std::unique_ptr<SlimTensor>& t : *out) {
    // Memory the model lent (create_tensor_from_blob over its own data): keep its owner.
    if (t->storage() == nullptr || t->storage()->kind() != Storage::Kind::Borrowed) continue;
    if (weights != nullptr && weights->contains(t->storage()->data())) {
      // An output aliasing an attached constant: a storage of its own that keeps the model
      // (the constant's is shared with the weights, which the model holds: no cycle).
      std::shared_ptr<Storage> own = Storage::borrow(t->storage()->data(), t->storage()->nbytes(), device_);
      own->retain_owner(loaded_);
      t = std::make_unique<SlimTensor>(std::move(own), t->sizes(), t->strides(), t->dtype(), t->storage_offset());
    } else {
      t->storage()->retain_owner(loaded_);
    }
  }
}

Error Model::current_constants(const ContainerConstantsApi& api, const std::vector<ContainerConstant>& constants,
                               std::vector<const SlimTensor*>* out) {
  // What runs use now: the attached weights, else the container's own (our views of them:
  // its handles go when it is handed other tensors for those names).
  std::vector<const SlimTensor*>& current = *out;
  current.assign(constants.size(), nullptr);
  if (const auto* weights = static_cast<const DeviceWeights*>(loaded_->weights.get())) {
    for (size_t i = 0; i < constants.size(); ++i) {
      for (size_t k = 0; k < weights->count(); ++k) {
        if (weights->name(k) == constants[i].name) current[i] = weights->tensor(k);
      }
    }
  } else if (api.extract_map != nullptr) {
    std::vector<const SlimTensor*> theirs;
    SLIMCUDA_RETURN_IF_ERROR(extract_container_constants(api, loaded_->container, constants, &theirs));
    for (size_t i = 0; i < constants.size(); ++i) {
      const SlimTensor* t = theirs[i];
      if (t == nullptr || t->storage() == nullptr) continue;
      loaded_->views.push_back(
          std::make_unique<SlimTensor>(Storage::borrow(t->storage()->data(), t->storage()->nbytes(), t->device()),
                                       t->sizes(), t->strides(), t->dtype(), t->storage_offset()));
      current[i] = loaded_->views.back().get();
    }
  }
  return Error::Ok;
}

Error Model::prepare_state(const std::string* wrapper_source, const StreamContext& ctx) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(table_.empty() && loaded_->state == nullptr, Error::InvalidState,
                             "the model's state was prepared already");
    const ContainerConstantsApi api =
        ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
    if (!api.num_constants || !api.name || !api.dtype || !api.data_size) return Error::Ok;  // shows no constants
    std::vector<ContainerConstant> constants;
    SLIMCUDA_RETURN_IF_ERROR(read_container_constants(api, loaded_->container, &constants));
    std::optional<std::set<std::string>> proven;
    if (wrapper_source != nullptr) proven = wrapper_read_only_constants(*wrapper_source);
    std::vector<const SlimTensor*> current;
    SLIMCUDA_RETURN_IF_ERROR(current_constants(api, constants, &current));
    std::vector<std::string> names;
    std::vector<const SlimTensor*> initial;
    std::vector<Constant> table;
    bool reachable = true;
    for (size_t i = 0; i < constants.size(); ++i) {
      Constant c{constants[i], is_state(constants[i], proven ? &*proven : nullptr), current[i]};
      if (c.state) {
        names.push_back(c.info.name);
        initial.push_back(current[i]);
        reachable = reachable && current[i] != nullptr;
      }
      table.push_back(std::move(c));
    }
    table_ = std::move(table);
    if (names.empty()) return Error::Ok;
    stateful_ = true;
    SLIMCUDA_CHECK_OR_RETURN(requested_instances_ <= 1, Error::InvalidArgument,
                             "the model writes %zu of its constants when it runs ('%s'%s): its state is one per load "
                             "and it runs one call at a time, so it cannot have %d instances; load it once per "
                             "caller instead (the loads share its weights, each has its own state)",
                             names.size(), names[0].c_str(), names.size() > 1 ? ", ..." : "", requested_instances_);
    slots_ = std::make_unique<InstanceSlots>(1);
    if (!reachable || (!api.update_user_managed_pairs && !api.update_user_managed_map)) {
      // The state stays in the container's own memory: one per load all the same (each load
      // has its container), but no second container (CUDA graphs) and no reset can reach it.
      return Error::Ok;
    }
    StreamContext copy_ctx = StreamContext::unselected(0);
    if (device_.is_cuda()) {
      SLIMCUDA_CHECK_OR_RETURN(!ctx.is_selected() || ctx.device() == device_.index, Error::InvalidArgument,
                               "the caller stream belongs to device %d, the model to device %d", ctx.device(),
                               device_.index);
      copy_ctx = ctx.is_selected() ? ctx : StreamContext::selected(stream_, device_.index);
    }
    std::unique_ptr<ModelState> state;
    SLIMCUDA_RETURN_IF_ERROR(ModelState::create(names, initial, device_, copy_ctx, loaded_->weights, &state));
    loaded_->state = std::move(state);
    SLIMCUDA_RETURN_IF_ERROR(hand_to(api, loaded_->container, loaded_->state->current(), false));
    for (Constant& c : table_) {
      if (!c.state) continue;
      c.tensor = loaded_->state->current().tensor(*loaded_->state->find(c.info.name));
    }
    if (device_.is_cuda()) {
      cuda::DeviceGuard guard(device_.index);
      SLIMCUDA_RETURN_IF_ERROR(guard.error());
      SLIMCUDA_CUDA_TRY(cudaEventCreateWithFlags(&state_fence_, cudaEventDisableTiming));
    }
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory preparing the model's state");
  }
}

const Model::Constant* Model::find_constant(const char* name) const noexcept {
  if (name == nullptr) return nullptr;
  for (const Constant& c : table_) {
    if (c.info.name == name) return &c;
  }
  for (const Constant& c : table_) {
    if (!c.info.original_fqn.empty() && c.info.original_fqn == name) return &c;
  }
  return nullptr;
}

Error Model::state_stream(const StreamContext& ctx, cudaStream_t* stream, bool* own) const noexcept {
  *stream = nullptr;
  *own = false;
  if (!device_.is_cuda()) return Error::Ok;
  SLIMCUDA_CHECK_OR_RETURN(!ctx.is_selected() || ctx.device() == device_.index, Error::InvalidArgument,
                           "the caller stream belongs to device %d, the model to device %d", ctx.device(),
                           device_.index);
  *own = !ctx.is_selected();
  *stream = *own ? stream_ : ctx.stream();
  return Error::Ok;
}

Error Model::reset_state(const StreamContext& ctx) noexcept {
  if (!stateful_) return Error::Ok;
  SLIMCUDA_CHECK_OR_RETURN(loaded_->state != nullptr, Error::NotSupported,
                           "the model's state stays inside its container (its library cannot show or take its "
                           "constants): slimcuda cannot reset it; load the model again");
  cudaStream_t stream = nullptr;
  bool own = false;
  SLIMCUDA_RETURN_IF_ERROR(state_stream(ctx, &stream, &own));
  InstanceSlot slot(*slots_);
  std::optional<cuda::DeviceGuard> guard;
  if (device_.is_cuda()) {
    guard.emplace(device_.index);
    SLIMCUDA_RETURN_IF_ERROR(guard->error());
    SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(stream, state_fence_, 0));
  }
  SLIMCUDA_RETURN_IF_ERROR(loaded_->state->reset(stream));
  if (!device_.is_cuda()) return Error::Ok;
  SLIMCUDA_CUDA_TRY(cudaEventRecord(state_fence_, stream));
  return own ? cuda::wait_for_stream(stream, device_.index) : Error::Ok;
}

Error Model::copy_constant(const SlimTensor& dst, const SlimTensor& src, const StreamContext& ctx) noexcept {
  cudaStream_t stream = nullptr;
  bool own = false;
  SLIMCUDA_RETURN_IF_ERROR(state_stream(ctx, &stream, &own));
  SLIMCUDA_CHECK_OR_RETURN(dst.sizes() == src.sizes(), Error::InvalidArgument,
                           "sizes differ: the constant and the tensor must have the same shape");
  InstanceSlot slot(*slots_);
  const StreamContext on = device_.is_cuda() ? StreamContext::selected(stream, device_.index) : ctx;
  std::optional<cuda::DeviceGuard> guard;
  if (state_fence_ != nullptr) {
    guard.emplace(device_.index);
    SLIMCUDA_RETURN_IF_ERROR(guard->error());
    SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(stream, state_fence_, 0));
  }
  SLIMCUDA_RETURN_IF_ERROR(copy_tensor(dst, src, on));
  if (state_fence_ != nullptr) SLIMCUDA_CUDA_TRY(cudaEventRecord(state_fence_, stream));
  return own ? cuda::wait_for_stream(stream, device_.index) : Error::Ok;
}

Error Model::read_constant(const char* name, const SlimTensor& dst, const StreamContext& ctx) noexcept {
  std::lock_guard<std::mutex> lock(swap_mu_);  // a swap repoints the weights' entries
  const Constant* c = find_constant(name);
  SLIMCUDA_CHECK_OR_RETURN(c != nullptr, Error::NotFound, "the model has no constant '%s'",
                           name != nullptr ? name : "(null)");
  SLIMCUDA_CHECK_OR_RETURN(
      c->tensor != nullptr, Error::NotSupported, "constant '%s' is not visible to slimcuda (%s)", name,
      c->info.from_folded ? "made by constant folding inside the container" : "the library cannot show its constants");
  return copy_constant(dst, *c->tensor, ctx);
}

Error Model::write_constant(const char* name, const SlimTensor& src, const StreamContext& ctx) noexcept {
  std::lock_guard<std::mutex> lock(swap_mu_);
  const Constant* c = find_constant(name);
  SLIMCUDA_CHECK_OR_RETURN(c != nullptr, Error::NotFound, "the model has no constant '%s'",
                           name != nullptr ? name : "(null)");
  SLIMCUDA_CHECK_OR_RETURN(c->state, Error::InvalidArgument,
                           "constant '%s' is a read-only %s (the model never writes it, and loads of one model "
                           "share it): only its state can be written",
                           name, constant_kind_name(c->info.kind));
  SLIMCUDA_CHECK_OR_RETURN(c->tensor != nullptr && loaded_->state != nullptr, Error::NotSupported,
                           "the model's state stays inside its container (its library cannot show or take its "
                           "constants): slimcuda cannot write '%s'",
                           name);
  return copy_constant(*c->tensor, src, ctx);
}

Error Model::match_staged_weights(const std::vector<std::string>& names, const std::vector<const SlimTensor*>& tensors,
                                  std::vector<const Constant*>* wanted, std::vector<const SlimTensor*>* given) const {
  for (const Constant& c : table_) {
    if (!c.state && !c.info.from_folded && c.info.kind != ConstantKind::Folded) wanted->push_back(&c);
  }
  given->assign(wanted->size(), nullptr);
  for (size_t i = 0; i < names.size(); ++i) {
    const Constant* c = find_constant(names[i].c_str());
    SLIMCUDA_CHECK_OR_RETURN(c != nullptr, Error::InvalidArgument, "the model has no constant '%s'", names[i].c_str());
    SLIMCUDA_CHECK_OR_RETURN(!c->state, Error::InvalidArgument,
                             "'%s' is the model's state, not a weight: write it with write_constant", names[i].c_str());
    const size_t k = static_cast<size_t>(std::find(wanted->begin(), wanted->end(), c) - wanted->begin());
    SLIMCUDA_CHECK_OR_RETURN(k < wanted->size(), Error::InvalidArgument,
                             "constant '%s' is not a weight that can be swapped", names[i].c_str());
    SLIMCUDA_CHECK_OR_RETURN((*given)[k] == nullptr, Error::InvalidArgument, "weight '%s' is given twice",
                             c->info.name.c_str());
    const SlimTensor* t = tensors[i];
    SLIMCUDA_CHECK_OR_RETURN(t != nullptr, Error::InvalidArgument, "null tensor for '%s'", names[i].c_str());
    SLIMCUDA_CHECK_OR_RETURN(static_cast<int32_t>(t->dtype()) == c->info.dtype, Error::InvalidArgument,
                             "weight '%s': dtype %s, the model's is %s", c->info.name.c_str(),
                             scalar_type_name(t->dtype()), scalar_type_name(static_cast<ScalarType>(c->info.dtype)));
    SLIMCUDA_CHECK_OR_RETURN(c->tensor != nullptr && t->sizes() == c->tensor->sizes(), Error::InvalidArgument,
                             "weight '%s': sizes %s, the model's are %s", c->info.name.c_str(),
                             shape(t->sizes()).c_str(),
                             c->tensor != nullptr ? shape(c->tensor->sizes()).c_str() : "unknown");
    (*given)[k] = t;
  }
  for (size_t k = 0; k < wanted->size(); ++k) {
    SLIMCUDA_CHECK_OR_RETURN((*given)[k] != nullptr, Error::InvalidArgument,
                             "%zu weights given; the model has %zu (no '%s')", names.size(), wanted->size(),
                             (*wanted)[k]->info.name.c_str());
  }
  return Error::Ok;
}

Error Model::copy_staged_weights(const std::vector<const Constant*>& wanted,
                                 const std::vector<const SlimTensor*>& given, const StreamContext& ctx,
                                 std::shared_ptr<DeviceWeights>* out) {
  // One block, each weight at its own aligned offset with the active one's layout.
  constexpr uint64_t kAlign = 256;
  std::vector<uint64_t> offsets(wanted.size());
  uint64_t total = 0;
  for (size_t k = 0; k < wanted.size(); ++k) {
    total = (total + kAlign - 1) / kAlign * kAlign;
    offsets[k] = total;
    total += wanted[k]->tensor->storage()->nbytes();
  }
  cudaStream_t stream = nullptr;
  bool own = false;
  SLIMCUDA_RETURN_IF_ERROR(state_stream(ctx, &stream, &own));
  const StreamContext on =
      device_.is_cuda() ? StreamContext::selected(stream, device_.index) : StreamContext::unselected(0);
  std::shared_ptr<Storage> memory;
  SLIMCUDA_RETURN_IF_ERROR(allocate_constants(total, device_, on, &memory));
  char* base = static_cast<char*>(memory->data());
  std::vector<std::string> staged_names;
  std::vector<std::unique_ptr<SlimTensor>> staged;
  for (size_t k = 0; k < wanted.size(); ++k) {
    const SlimTensor& like = *wanted[k]->tensor;
    const size_t n = like.storage()->nbytes();
    staged.push_back(std::make_unique<SlimTensor>(Storage::borrow(n > 0 ? base + offsets[k] : nullptr, n, device_),
                                                  like.sizes(), like.strides(), like.dtype(), like.storage_offset()));
    staged_names.push_back(wanted[k]->info.name);
    // On the caller's stream (the transfer engine stages a host source); runs go on.
    SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*staged.back(), *given[k], on));
  }
  if (own) SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(stream, device_.index));
  *out = std::make_shared<DeviceWeights>(std::move(memory), std::move(staged_names), std::move(staged));
  return Error::Ok;
}

Error Model::stage_weights(const std::vector<std::string>& names, const std::vector<const SlimTensor*>& tensors,
                           const StreamContext& ctx) noexcept {
  try {
    std::lock_guard<std::mutex> lock(swap_mu_);
    SLIMCUDA_CHECK_OR_RETURN(names.size() == tensors.size(), Error::InvalidArgument, "%zu names for %zu tensors",
                             names.size(), tensors.size());
    const ContainerConstantsApi api =
        ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
    SLIMCUDA_CHECK_OR_RETURN(
        api.update_user_managed_pairs && api.swap && api.free_inactive && !table_.empty(), Error::NotSupported,
        "the model library cannot swap weights (no AOTInductorModelContainerUpdateUserManagedConstantBufferPairs, "
        "...SwapConstantBuffer or ...FreeInactiveConstantBuffer, or no constants)");
    SLIMCUDA_CHECK_OR_RETURN(staged_ == nullptr, Error::InvalidState,
                             "a set of weights is staged already: swap it in, or free it, first");
    // Every read-only weight once, each of the constant's dtype and sizes: checked before
    // anything is allocated (the active weights are never touched by a refusal).
    std::vector<const Constant*> wanted;
    std::vector<const SlimTensor*> given;
    SLIMCUDA_RETURN_IF_ERROR(match_staged_weights(names, tensors, &wanted, &given));
    for (const Constant* c : wanted) {
      SLIMCUDA_CHECK_OR_RETURN(c->tensor == nullptr || c->tensor->device().type == device_.type, Error::NotSupported,
                               "weight '%s' lives on the CPU of a CUDA model, and PyTorch 2.11's containers take no "
                               "such constant through their update paths: this model's weights cannot be swapped",
                               c->info.name.c_str());
    }
    std::shared_ptr<DeviceWeights> weights;
    SLIMCUDA_RETURN_IF_ERROR(copy_staged_weights(wanted, given, ctx, &weights));
    // The container's inactive set: these weights, and the state it keeps from the active one.
    clear_last_error();
    std::vector<ContainerConstantsApi::Pair> pairs(weights->count());
    for (size_t i = 0; i < weights->count(); ++i) pairs[i] = {weights->name(i).c_str(), weights->tensor(i)};
    std::vector<const SlimTensor*> lent(weights->count());
    for (size_t i = 0; i < weights->count(); ++i) lent[i] = weights->tensor(i);
    HandleAdoption adopting(std::move(lent));
    const int32_t rc = api.update_user_managed_pairs(loaded_->container, pairs.data(), pairs.size(), true, true);
    auto handles = std::make_shared<std::vector<std::unique_ptr<SlimTensor>>>(adopting.take());
    if (!handles->empty()) {
      std::lock_guard<std::mutex> hold(loaded_->adopted_mu);
      loaded_->adopted.push_back(std::move(handles));
    }
    if (rc != 0) {
      const std::string why = last_error_message();
      return set_last_error(Error::InvalidProgram, "the container refused the new weights (error %d)%s%s", rc,
                            why.empty() ? "" : ": ", why.c_str());
    }
    staged_ = std::move(weights);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory staging weights");
  }
}

Error Model::swap_weights() noexcept {
  std::lock_guard<std::mutex> lock(swap_mu_);
  SLIMCUDA_CHECK_OR_RETURN(staged_ != nullptr, Error::InvalidState, "no weights are staged (stage_weights first)");
  const ContainerConstantsApi api =
      ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
  // Between runs: every instance slot held, so no run is inside the container.
  std::vector<std::unique_ptr<InstanceSlot>> all;
  for (size_t i = 0; i < slots_->count(); ++i) all.push_back(std::make_unique<InstanceSlot>(*slots_));
  clear_last_error();
  if (api.swap(loaded_->container) != 0) {
    const std::string why = last_error_message();
    return set_last_error(Error::InvalidProgram, "AOTInductorModelContainerSwapConstantBuffer failed%s%s",
                          why.empty() ? "" : ": ", why.c_str());
  }
  // Graphs hold the old weights' addresses: made again, on the new ones, by the next runs
  // (the old graphs wait for their last replays as they go).
  if (graphs_ != nullptr) {
    graphs_.reset();
    make_graphs();
  }
  inactive_ = std::move(loaded_->weights);  // the old set (nullptr: the container's own copy)
  loaded_->weights = std::move(staged_);
  swapped_ = true;
  const auto* w = static_cast<const DeviceWeights*>(loaded_->weights.get());
  for (Constant& c : table_) {
    for (size_t k = 0; k < w->count(); ++k) {
      if (w->name(k) == c.info.name) c.tensor = w->tensor(k);
    }
  }
  return Error::Ok;
}

Error Model::free_inactive_weights() noexcept {
  std::lock_guard<std::mutex> lock(swap_mu_);
  const ContainerConstantsApi api =
      ContainerConstantsApi::probe([&](const char* name) { return loaded_->library->symbol(name); });
  SLIMCUDA_CHECK_OR_RETURN(api.free_inactive != nullptr, Error::NotSupported,
                           "the model library has no AOTInductorModelContainerFreeInactiveConstantBuffer");
  std::vector<std::unique_ptr<InstanceSlot>> all;
  for (size_t i = 0; i < slots_->count(); ++i) all.push_back(std::make_unique<InstanceSlot>(*slots_));
  // The state's initial values may live in the set that goes (the archive's shared upload,
  // or the container's own copy of what its library embeds): the state keeps its own.
  if (loaded_->state != nullptr && (inactive_ != nullptr || swapped_)) {
    SLIMCUDA_RETURN_IF_ERROR(loaded_->state->own_initial_values(device_.is_cuda() ? stream_ : nullptr));
  }
  clear_last_error();
  if (api.free_inactive(loaded_->container) != 0) {
    const std::string why = last_error_message();
    return set_last_error(Error::InvalidProgram, "AOTInductorModelContainerFreeInactiveConstantBuffer failed%s%s",
                          why.empty() ? "" : ": ", why.c_str());
  }
  // Ours go once the GPU is done with them (DeviceWeights waits for the device); a staged
  // set not swapped in yet is the inactive one too.
  inactive_.reset();
  staged_.reset();
  return Error::Ok;
}

}  // namespace slimcuda
