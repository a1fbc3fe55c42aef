// SPDX-License-Identifier: Apache-2.0
#include "csrc/model/constants.h"

#include <cuda_runtime_api.h>

#include <cstring>
#include <new>
#include <optional>
#include <unordered_map>

#include "csrc/core/limits.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/staged_copy.h"
#include "csrc/memory/transfer.h"
#include "csrc/model/weights_cache.h"
#include "csrc/tensor/handle_adoption.h"
#include "slimcuda/last_error.h"
#include "slimcuda/scalar_type.h"

// The AtenTensorHandle pointee (PyTorch's name; a SlimTensor here): the map-based container
// functions take a std::unordered_map<std::string, AtenTensorOpaque*>*.
struct AtenTensorOpaque;

namespace slimcuda {
namespace {

// Each constant starts at this alignment inside the weights' one allocation: cudaMalloc's,
// and more than any vector load the kernels make.
constexpr uint64_t kConstantAlignment = 256;

// A constant after the checks: the entry, its container index and where it goes.
struct Planned {
  const ConstantEntry* entry;
  size_t index;  // in the container's constants
  ScalarType dtype;
  std::vector<int64_t> strides;  // resolved (contiguous when the entry gave none)
  uint64_t offset;               // in the weights' allocation
};

std::string shape_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

// Checks one entry's view against its bytes; fills the resolved strides.
Error check_entry(const ConstantEntry& e, const ContainerConstant& c, ScalarType dtype, std::vector<int64_t>* strides) {
  const char* name = c.name.c_str();
  SLIMCUDA_CHECK_OR_RETURN(static_cast<int64_t>(e.sizes.size()) <= kMaxDims, Error::InvalidProgram,
                           "constant '%s': %zu dimensions (at most %lld)", name, e.sizes.size(),
                           static_cast<long long>(kMaxDims));
  SLIMCUDA_CHECK_OR_RETURN(e.strides.empty() || e.strides.size() == e.sizes.size(), Error::InvalidProgram,
                           "constant '%s': %zu strides for %zu sizes", name, e.strides.size(), e.sizes.size());
  SLIMCUDA_CHECK_OR_RETURN(e.storage_offset >= 0, Error::InvalidProgram, "constant '%s': storage offset %lld", name,
                           static_cast<long long>(e.storage_offset));
  bool empty = false;
  for (int64_t s : e.sizes) {
    SLIMCUDA_CHECK_OR_RETURN(s >= 0, Error::InvalidProgram, "constant '%s': sizes %s", name,
                             shape_text(e.sizes).c_str());
    empty = empty || s == 0;
  }
  strides->assign(e.sizes.size(), 0);
  if (e.strides.empty()) {
    uint64_t stride = 1;
    for (size_t d = e.sizes.size(); d-- > 0;) {
      (*strides)[d] = static_cast<int64_t>(stride);
      uint64_t next = 0;
      const uint64_t size = static_cast<uint64_t>(e.sizes[d] > 1 ? e.sizes[d] : 1);
      SLIMCUDA_CHECK_OR_RETURN(!__builtin_mul_overflow(stride, size, &next) && next <= INT64_MAX, Error::InvalidProgram,
                               "constant '%s': sizes %s overflow", name, shape_text(e.sizes).c_str());
      stride = next;
    }
  } else {
    for (int64_t s : e.strides) {
      SLIMCUDA_CHECK_OR_RETURN(s >= 0, Error::InvalidProgram, "constant '%s': strides %s", name,
                               shape_text(e.strides).c_str());
    }
    *strides = e.strides;
  }
  // The bytes the view reaches: (offset + 1 + sum((size - 1) * stride)) elements.
  uint64_t span = 0;
  if (!empty) {
    uint64_t last = static_cast<uint64_t>(e.storage_offset);
    for (size_t d = 0; d < e.sizes.size(); ++d) {
      uint64_t step = 0;
      const bool overflow =
          __builtin_mul_overflow(static_cast<uint64_t>(e.sizes[d] - 1), static_cast<uint64_t>((*strides)[d]), &step) ||
          __builtin_add_overflow(last, step, &last);
      SLIMCUDA_CHECK_OR_RETURN(!overflow, Error::InvalidProgram, "constant '%s': sizes %s and strides %s overflow",
                               name, shape_text(e.sizes).c_str(), shape_text(*strides).c_str());
    }
    const bool overflow = __builtin_add_overflow(last, uint64_t{1}, &span) ||
                          __builtin_mul_overflow(span, static_cast<uint64_t>(element_size(dtype)), &span);
    SLIMCUDA_CHECK_OR_RETURN(!overflow, Error::InvalidProgram, "constant '%s': sizes %s and strides %s overflow", name,
                             shape_text(e.sizes).c_str(), shape_text(*strides).c_str());
  }
  SLIMCUDA_CHECK_OR_RETURN(span <= e.nbytes, Error::InvalidProgram,
                           "constant '%s': sizes %s, strides %s and offset %lld reach %llu bytes; its storage has %llu",
                           name, shape_text(e.sizes).c_str(), shape_text(*strides).c_str(),
                           static_cast<long long>(e.storage_offset), static_cast<unsigned long long>(span),
                           static_cast<unsigned long long>(e.nbytes));
  SLIMCUDA_CHECK_OR_RETURN(e.nbytes <= c.data_size, Error::InvalidProgram,
                           "constant '%s': %llu bytes given; the model's constant holds %llu", name,
                           static_cast<unsigned long long>(e.nbytes), static_cast<unsigned long long>(c.data_size));
  SLIMCUDA_CHECK_OR_RETURN(e.source != nullptr || e.nbytes == 0, Error::InvalidProgram,
                           "constant '%s': no source for its %llu bytes", name,
                           static_cast<unsigned long long>(e.nbytes));
  if (e.source != nullptr) {
    const uint64_t have = e.source->size();
    SLIMCUDA_CHECK_OR_RETURN(e.source_offset <= have && e.nbytes <= have - e.source_offset, Error::InvalidProgram,
                             "constant '%s' needs bytes [%llu, +%llu) of a weights source of %llu bytes", name,
                             static_cast<unsigned long long>(e.source_offset),
                             static_cast<unsigned long long>(e.nbytes), static_cast<unsigned long long>(have));
  }
  return Error::Ok;
}

Error read_piece(const void* source, uint64_t offset, size_t n, void* dst) noexcept {
  return static_cast<const WeightSource*>(source)->read(offset, n, dst);
}

// The upload itself: one allocation, the bytes, one tensor per constant.
Error upload(const std::vector<Planned>& plan, const std::vector<ContainerConstant>& constants, uint64_t total,
             Device device, const StreamContext& upload_ctx, std::shared_ptr<DeviceWeights>* out) noexcept {
  try {
    std::shared_ptr<Storage> memory;
    SLIMCUDA_RETURN_IF_ERROR(allocate_constants(total, device, upload_ctx, &memory));
    char* base = static_cast<char*>(memory->data());
    if (device.is_cuda()) {
      std::vector<UploadPiece> pieces;
      pieces.reserve(plan.size());
      for (const Planned& p : plan) {
        if (p.entry->nbytes == 0) continue;
        UploadPiece piece;
        piece.dst_offset = p.offset;
        piece.nbytes = p.entry->nbytes;
        if (const uint8_t* view = p.entry->source->view()) {
          piece.host = view + p.entry->source_offset;
        } else {
          piece.reader = p.entry->source.get();
          piece.read = read_piece;
          piece.read_offset = p.entry->source_offset;
        }
        pieces.push_back(piece);
      }
      const Error e = staged_upload(base, total, pieces.data(), pieces.size(), upload_ctx, staging_config());
      if (e != Error::Ok) {
        return set_last_error(e, "uploading %llu bytes of weights: %s", static_cast<unsigned long long>(total),
                              last_error_message());
      }
    } else {
      for (const Planned& p : plan) {
        if (p.entry->nbytes == 0) continue;
        char* dst = base + p.offset;
        if (const uint8_t* view = p.entry->source->view()) {
          std::memcpy(dst, view + p.entry->source_offset, static_cast<size_t>(p.entry->nbytes));
        } else {
          SLIMCUDA_RETURN_IF_ERROR(
              p.entry->source->read(p.entry->source_offset, static_cast<size_t>(p.entry->nbytes), dst));
        }
      }
    }
    std::vector<std::string> names;
    std::vector<std::unique_ptr<SlimTensor>> tensors;
    names.reserve(plan.size());
    tensors.reserve(plan.size());
    for (const Planned& p : plan) {
      // Not owning: PyTorch 2.11's user-managed containers keep a copy of each handle they
      // are given (aoti_torch_new_tensor_handle in MaybeOwningAtenTensorHandle) and never
      // delete it (2.15's delete it with the container; either way slimcuda frees it:
      // HandleAdoption); a copy that owned the memory would keep the weights forever. The memory
      // is DeviceWeights' (and a run's output aliasing it keeps the model: Model::run).
      std::shared_ptr<Storage> own = Storage::borrow(p.entry->nbytes > 0 ? base + p.offset : nullptr,
                                                     static_cast<size_t>(p.entry->nbytes), device);
      tensors.push_back(
          std::make_unique<SlimTensor>(std::move(own), p.entry->sizes, p.strides, p.dtype, p.entry->storage_offset));
      names.push_back(constants[p.index].name);
    }
    *out = std::make_shared<DeviceWeights>(std::move(memory), std::move(names), std::move(tensors));
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory preparing the weights");
  }
}

std::string device_name(Device d) { return d.is_cuda() ? "cuda:" + std::to_string(d.index) : "cpu"; }

// The hand-over itself: the first path the library has (the copying one only when
// `may_copy`).
Error hand_over(const ContainerConstantsApi& api, void* container, const DeviceWeights& weights, bool may_copy,
                ConstantsPath* out, std::shared_ptr<const void>* adopted, bool full = true) {
  clear_last_error();  // what the container's shim calls report, if anything, goes into ours
  std::vector<const SlimTensor*> lent(weights.count());
  for (size_t i = 0; i < weights.count(); ++i) lent[i] = weights.tensor(i);
  HandleAdoption adoption(std::move(lent));
  // Whatever happens below, the handles the container made of ours are deleted with it.
  struct Taken {
    HandleAdoption& from;
    std::shared_ptr<const void>* to;
    ~Taken() {
      auto handles = std::make_shared<std::vector<std::unique_ptr<SlimTensor>>>(from.take());
      if (to != nullptr && !handles->empty()) *to = std::move(handles);
    }
  } taken{adoption, adopted};
  int32_t rc = 0;
  ConstantsPath path = ConstantsPath::UserManagedPairs;
  if (api.update_user_managed_pairs != nullptr) {
    std::vector<ContainerConstantsApi::Pair> pairs(weights.count());
    for (size_t i = 0; i < weights.count(); ++i) pairs[i] = {weights.name(i).c_str(), weights.tensor(i)};
    rc = api.update_user_managed_pairs(container, pairs.data(), pairs.size(), false, full);
  } else {
    path = api.update_user_managed_map != nullptr ? ConstantsPath::UserManagedMap : ConstantsPath::ContainerCopy;
    SLIMCUDA_CHECK_OR_RETURN(path != ConstantsPath::ContainerCopy || (may_copy && api.update_copy_map),
                             Error::NotSupported,
                             "the model library cannot share constants (no AOTInductorModelContainerUpdate"
                             "UserManagedConstantBuffer[Pairs])");
    // Exactly the map type the container casts the handle to.
    std::unordered_map<std::string, AtenTensorOpaque*> map;
    for (size_t i = 0; i < weights.count(); ++i) {
      map.emplace(weights.name(i), reinterpret_cast<AtenTensorOpaque*>(weights.tensor(i)));
    }
    rc = path == ConstantsPath::UserManagedMap ? api.update_user_managed_map(container, &map, false, full)
                                               : api.update_copy_map(container, &map, false, full);
  }
  if (rc != 0) {
    const std::string why = last_error_message();
    return set_last_error(Error::InvalidProgram, "the container refused its constants (%s: error %d)%s%s",
                          constants_path_name(path), rc, why.empty() ? "" : ": ", why.c_str());
  }
  *out = path;
  return Error::Ok;
}

}  // namespace

const char* constant_kind_name(ConstantKind kind) noexcept {
  switch (kind) {
    case ConstantKind::Unknown:
      return "unknown";
    case ConstantKind::Parameter:
      return "parameter";
    case ConstantKind::Buffer:
      return "buffer";
    case ConstantKind::TensorConstant:
      return "tensor constant";
    case ConstantKind::Folded:
      return "folded";
  }
  return "?";
}

Error allocate_constants(uint64_t total, Device device, const StreamContext& ctx,
                         std::shared_ptr<Storage>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(total <= SIZE_MAX, Error::InvalidProgram, "%llu bytes of constants",
                           static_cast<unsigned long long>(total));
  if (!device.is_cuda()) {
    return Storage::allocate(static_cast<size_t>(total), device, StreamContext::unselected(0), out);
  }
  // Allocated on slimcuda's internal stream, which lives as long as the process: the block
  // outlives the model (and the stream) that first wrote it.
  cudaStream_t internal = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(transfer::internal_stream(device.index, &internal));
  SLIMCUDA_RETURN_IF_ERROR(
      Storage::allocate(static_cast<size_t>(total), device, StreamContext::selected(internal, device.index), out));
  if (total > 0 && ctx.stream() != internal) {
    // A cached block is reusable at once on the stream it is ordered on: the writer waits
    // for whatever that stream still does.
    cuda::DeviceGuard guard(device.index);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    cudaEvent_t ready = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(cuda::thread_event(device.index, 0, &ready));
    SLIMCUDA_CUDA_TRY(cudaEventRecord(ready, internal));
    SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(ctx.stream(), ready, 0));
  }
  return Error::Ok;
}

Error extract_container_constants(const ContainerConstantsApi& api, void* container,
                                  const std::vector<ContainerConstant>& constants,
                                  std::vector<const SlimTensor*>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(container != nullptr && out != nullptr, Error::InvalidArgument, "null container or out");
  SLIMCUDA_CHECK_OR_RETURN(api.extract_map != nullptr, Error::NotSupported,
                           "the model library cannot show its constants (no AOTInductorModelContainer"
                           "ExtractConstantsMap)");
  try {
    // Exactly the map type the container fills.
    std::unordered_map<std::string, AtenTensorOpaque*> map;
    clear_last_error();
    const int32_t rc = api.extract_map(container, &map, false);
    if (rc != 0) {
      const std::string why = last_error_message();
      return set_last_error(Error::InvalidProgram, "AOTInductorModelContainerExtractConstantsMap failed (%d)%s%s", rc,
                            why.empty() ? "" : ": ", why.c_str());
    }
    // Keyed by original FQN (the container's name where it has none).
    std::vector<const SlimTensor*> found(constants.size(), nullptr);
    for (size_t i = 0; i < constants.size(); ++i) {
      if (constants[i].from_folded) continue;
      auto it = map.find(constants[i].original_fqn.empty() ? constants[i].name : constants[i].original_fqn);
      if (it == map.end()) it = map.find(constants[i].name);
      if (it != map.end()) found[i] = reinterpret_cast<const SlimTensor*>(it->second);
    }
    *out = std::move(found);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading the constants");
  }
}

const char* constants_path_name(ConstantsPath path) noexcept {
  switch (path) {
    case ConstantsPath::UserManagedPairs:
      return "UpdateUserManagedConstantBufferPairs";
    case ConstantsPath::UserManagedMap:
      return "UpdateUserManagedConstantBuffer";
    case ConstantsPath::ContainerCopy:
      return "UpdateConstantBuffer";
    case ConstantsPath::ContainerBlob:
      return "UpdateConstantsFromBlob";
  }
  return "?";
}

Error read_container_constants(const ContainerConstantsApi& api, void* container,
                               std::vector<ContainerConstant>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(container != nullptr && out != nullptr, Error::InvalidArgument, "null container or out");
  SLIMCUDA_CHECK_OR_RETURN(api.num_constants && api.name && api.dtype && api.data_size, Error::NotSupported,
                           "the model library lacks the container's constants API "
                           "(AOTInductorModelContainerGetNumConstants, ...GetConstantName, ...Dtype, ...DataSize)");
  try {
    size_t n = 0;
    SLIMCUDA_CHECK_OR_RETURN(api.num_constants(container, &n) == 0, Error::InvalidProgram,
                             "AOTInductorModelContainerGetNumConstants failed");
    std::vector<ContainerConstant> constants(n);
    for (size_t i = 0; i < n; ++i) {
      ContainerConstant& c = constants[i];
      const char* name = nullptr;
      const char* fqn = nullptr;
      size_t size = 0;
      SLIMCUDA_CHECK_OR_RETURN(api.name(container, i, &name) == 0 && name != nullptr, Error::InvalidProgram,
                               "the container gives no name for constant %zu", i);
      c.name = name;
      SLIMCUDA_CHECK_OR_RETURN(api.dtype(container, i, &c.dtype) == 0, Error::InvalidProgram,
                               "the container gives no dtype for constant '%s'", name);
      SLIMCUDA_CHECK_OR_RETURN(api.data_size(container, i, &size) == 0, Error::InvalidProgram,
                               "the container gives no size for constant '%s'", name);
      c.data_size = size;
      if (api.original_fqn != nullptr && api.original_fqn(container, i, &fqn) == 0 && fqn != nullptr) {
        c.original_fqn = fqn;
      }
      bool folded = false;
      if (api.from_folded != nullptr && api.from_folded(container, i, &folded) == 0) c.from_folded = folded;
      int32_t kind = 0;
      if (api.type != nullptr && api.type(container, i, &kind) == 0 && kind >= 0 && kind <= 4) {
        c.kind = static_cast<ConstantKind>(kind);
      }
    }
    *out = std::move(constants);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error entries_from_blob(const std::vector<ContainerConstant>& constants, const std::vector<ConstantShape>& shapes,
                        const std::shared_ptr<const WeightSource>& blob, std::vector<ConstantEntry>* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(blob != nullptr && out != nullptr, Error::InvalidArgument, "null blob or out");
  try {
    std::vector<ConstantEntry> entries;
    size_t k = 0;
    uint64_t offset = 0;
    const uint64_t have = blob->size();
    for (const ContainerConstant& c : constants) {
      if (c.from_folded) continue;
      SLIMCUDA_CHECK_OR_RETURN(k < shapes.size(), Error::InvalidProgram,
                               "%zu shapes for more non-folded constants ('%s' has none)", shapes.size(),
                               c.name.c_str());
      SLIMCUDA_CHECK_OR_RETURN(offset <= have && c.data_size <= have - offset, Error::InvalidProgram,
                               "the weights blob has %llu bytes; constant '%s' needs [%llu, +%llu)",
                               static_cast<unsigned long long>(have), c.name.c_str(),
                               static_cast<unsigned long long>(offset), static_cast<unsigned long long>(c.data_size));
      ConstantEntry e;
      e.name = c.name;
      e.dtype = c.dtype;
      e.sizes = shapes[k].sizes;
      e.strides = shapes[k].strides;
      e.storage_offset = shapes[k].storage_offset;
      e.on_cpu = shapes[k].on_cpu;
      e.source = blob;
      e.source_offset = offset;
      e.nbytes = c.data_size;
      entries.push_back(std::move(e));
      offset += c.data_size;
      ++k;
    }
    SLIMCUDA_CHECK_OR_RETURN(k == shapes.size(), Error::InvalidProgram, "%zu shapes for %zu non-folded constants",
                             shapes.size(), k);
    *out = std::move(entries);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

Error hand_over_constants(const ContainerConstantsApi& api, void* container, const DeviceWeights& weights,
                          ConstantsPath* path, std::shared_ptr<const void>* adopted, bool full) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(container != nullptr && path != nullptr, Error::InvalidArgument, "null container or path");
  try {
    return hand_over(api, container, weights, false, path, adopted, full);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory handing over constants");
  }
}

namespace {

// Checks every entry against the container's constants, and that none is missing, before
// anything is allocated; lays them out in one block of `*total` bytes. May throw
// std::bad_alloc.
Error plan_constants(const std::vector<ContainerConstant>& constants, const std::vector<ConstantEntry>& entries,
                     std::vector<Planned>* out, uint64_t* out_total) {
  std::vector<Planned>& plan = *out;
  std::unordered_map<std::string, size_t> by_name, by_fqn;
  for (size_t i = 0; i < constants.size(); ++i) {
    by_name.emplace(constants[i].name, i);
    if (!constants[i].original_fqn.empty()) by_fqn.emplace(constants[i].original_fqn, i);
  }
  plan.reserve(entries.size());
  std::vector<const ConstantEntry*> given(constants.size(), nullptr);
  uint64_t total = 0;
  for (const ConstantEntry& e : entries) {
    std::optional<size_t> found;
    if (auto it = by_name.find(e.name); it != by_name.end()) {
      found = it->second;
    } else if (auto fqn = by_fqn.find(e.name); fqn != by_fqn.end()) {
      found = fqn->second;
    }
    SLIMCUDA_CHECK_OR_RETURN(found.has_value(), Error::InvalidProgram,
                             "weights name a constant '%s' the model does not have", e.name.c_str());
    const size_t i = *found;
    const ContainerConstant& c = constants[i];
    SLIMCUDA_CHECK_OR_RETURN(given[i] == nullptr, Error::InvalidProgram, "constant '%s' is given twice ('%s' and '%s')",
                             c.name.c_str(), given[i] ? given[i]->name.c_str() : "", e.name.c_str());
    given[i] = &e;
    SLIMCUDA_CHECK_OR_RETURN(e.dtype == -1 || e.dtype == c.dtype, Error::InvalidProgram,
                             "constant '%s': dtype %d given, the model's is %d", c.name.c_str(), e.dtype, c.dtype);
    SLIMCUDA_CHECK_OR_RETURN(is_supported_scalar_type(c.dtype), Error::InvalidProgram,
                             "constant '%s' has dtype %d, which slimcuda does not know", c.name.c_str(), c.dtype);
    const ScalarType dtype = static_cast<ScalarType>(c.dtype);
    Planned p{&e, i, dtype, {}, 0};
    SLIMCUDA_RETURN_IF_ERROR(check_entry(e, c, dtype, &p.strides));
    const uint64_t aligned = (total + kConstantAlignment - 1) / kConstantAlignment * kConstantAlignment;
    SLIMCUDA_CHECK_OR_RETURN(aligned >= total && e.nbytes <= UINT64_MAX - aligned, Error::InvalidProgram,
                             "the constants' sizes overflow 64 bits at '%s'", c.name.c_str());
    p.offset = aligned;
    total = aligned + e.nbytes;
    plan.push_back(std::move(p));
  }
  SLIMCUDA_CHECK_OR_RETURN(total <= SIZE_MAX, Error::InvalidProgram, "%llu bytes of constants",
                           static_cast<unsigned long long>(total));
  for (size_t i = 0; i < constants.size(); ++i) {
    SLIMCUDA_CHECK_OR_RETURN(given[i] != nullptr || constants[i].from_folded || constants[i].data_size == 0,
                             Error::InvalidProgram, "the weights lack constant '%s'%s%s%s (%llu bytes)",
                             constants[i].name.c_str(), constants[i].original_fqn.empty() ? "" : " (",
                             constants[i].original_fqn.c_str(), constants[i].original_fqn.empty() ? "" : ")",
                             static_cast<unsigned long long>(constants[i].data_size));
  }
  *out_total = total;
  return Error::Ok;
}

// The weights cache's key: every fact the uploaded tensors depend on, in clear (no hash
// that could collide); "" when a source cannot be named across loads (never shared).
std::string weights_key(const std::string& model_identity, Device device, const std::vector<Planned>& plan,
                        const std::vector<ContainerConstant>& constants) {
  // One upload per (model, constants, device): the key names every fact the tensors depend on.
  bool shareable = !model_identity.empty();
  std::string facts = model_identity + "|" + device_name(device);
  for (const Planned& p : plan) {
    const ConstantEntry& e = *p.entry;
    const std::string id = e.source ? e.source->identity() : std::string("none");
    shareable = shareable && !id.empty();
    facts += "|" + constants[p.index].name + ":" + std::to_string(static_cast<int>(p.dtype)) + ":" +
             shape_text(e.sizes) + shape_text(p.strides) + ":" + std::to_string(e.storage_offset) + ":" + id + "@" +
             std::to_string(e.source_offset) + "+" + std::to_string(e.nbytes);
  }
  return shareable ? facts : std::string();
}

}  // namespace

Error attach_constants(const ContainerConstantsApi& api, void* container, Device device,
                       const std::string& model_identity, const std::vector<ConstantEntry>& entries,
                       const StreamContext& ctx, cudaStream_t model_stream, AttachedConstants* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(container != nullptr && out != nullptr, Error::InvalidArgument, "null container or out");
  SLIMCUDA_CHECK_OR_RETURN(device.type == DeviceType::CPU || (device.is_cuda() && device.index >= 0),
                           Error::InvalidArgument, "device %s:%d", device.is_cuda() ? "cuda" : "cpu", device.index);
  SLIMCUDA_CHECK_OR_RETURN(api.update_user_managed_pairs || api.update_user_managed_map || api.update_copy_map,
                           Error::NotSupported,
                           "the model library has no way to take constants (AOTInductorModelContainerUpdate"
                           "UserManagedConstantBufferPairs, ...UpdateUserManagedConstantBuffer, "
                           "...UpdateConstantBuffer)");
  try {
    std::vector<ContainerConstant> constants;
    SLIMCUDA_RETURN_IF_ERROR(read_container_constants(api, container, &constants));
    // Checks first: nothing is allocated for entries that cannot all be used.
    std::vector<Planned> plan;
    uint64_t total = 0;
    SLIMCUDA_RETURN_IF_ERROR(plan_constants(constants, entries, &plan, &total));

    StreamContext upload_ctx = StreamContext::unselected(0);
    if (device.is_cuda()) {
      SLIMCUDA_CHECK_OR_RETURN(!ctx.is_selected() || ctx.device() == device.index, Error::InvalidArgument,
                               "the caller stream belongs to device %d, the model to device %d", ctx.device(),
                               device.index);
      upload_ctx = ctx.is_selected() ? ctx : StreamContext::selected(model_stream, device.index);
    }

    const std::string key = weights_key(model_identity, device, plan, constants);
    std::shared_ptr<DeviceWeights> weights;
    bool shared = false;
    SLIMCUDA_RETURN_IF_ERROR(WeightsCache::instance().get_or_upload(
        key,
        [&](std::shared_ptr<DeviceWeights>* fresh) {
          return upload(plan, constants, total, device, upload_ctx, fresh);
        },
        &weights, &shared));

    ConstantsPath path = ConstantsPath::UserManagedPairs;
    SLIMCUDA_RETURN_IF_ERROR(hand_over(api, container, *weights, true, &path, &out->adopted));
    out->path = path;
    out->bytes = weights->bytes();
    out->shared = shared;
    // The container copied them: ours are not needed (nor shared) any more.
    out->keep_alive = path == ConstantsPath::ContainerCopy ? nullptr : std::shared_ptr<const void>(std::move(weights));
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory attaching constants");
  }
}

}  // namespace slimcuda
