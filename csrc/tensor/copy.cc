// SPDX-License-Identifier: Apache-2.0
// copy_tensor: the dispatch between host loops, kernels and the transfer engine.
#include "csrc/tensor/copy.h"

#include <cuda_runtime_api.h>

#include <memory>
#include <new>
#include <string>
#include <vector>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/memory/transfer.h"
#include "csrc/tensor/copy_host.h"
#include "csrc/tensor/copy_kernels.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

std::unique_ptr<char[]> host_buffer(size_t n) { return std::unique_ptr<char[]>(new (std::nothrow) char[n]); }

std::string shape_string(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

// Whether t's elements may alias, so writing them in turn is ill-defined and unbounded by
// t's storage: a dimension of size > 1 with stride 0 (PyTorch's MemOverlap::Yes), or more
// elements than the storage span they reach (then two must share a slot). What passes has
// numel <= span <= storage elements, so a copy into it does work bounded by its storage.
Error check_no_internal_overlap(const SlimTensor& t) noexcept {
  for (int64_t d = 0; d < t.dim(); ++d) {
    SLIMCUDA_CHECK_OR_RETURN(t.sizes()[d] <= 1 || t.strides()[d] != 0, Error::InvalidArgument,
                             "the destination has overlapping elements (dimension %lld: size %lld, stride 0)",
                             static_cast<long long>(d), static_cast<long long>(t.sizes()[d]));
  }
  int64_t span = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_elements(t.dim(), t.sizes().data(), t.strides().data(), 0, &span));
  SLIMCUDA_CHECK_OR_RETURN(t.numel() <= span, Error::InvalidArgument,
                           "the destination has overlapping elements (%lld elements in a span of %lld)",
                           static_cast<long long>(t.numel()), static_cast<long long>(span));
  return Error::Ok;
}

// One side of a copy, as the loops and kernels take it.
struct Side {
  char* data;
  int dtype;
  int size;  // bytes per element
};

Side side(const SlimTensor& t) {
  return Side{static_cast<char*>(t.data_ptr()), static_cast<int>(t.dtype()), static_cast<int>(t.element_size())};
}

// Records an event of this thread's `slot` on `stream` (of `device`) and returns it.
Error record(int device, int slot, cudaStream_t stream, cudaEvent_t* out) {
  cuda::DeviceGuard guard(device);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_RETURN_IF_ERROR(cuda::thread_event(device, slot, out));
  SLIMCUDA_CUDA_TRY(cudaEventRecord(*out, stream));
  return Error::Ok;
}

Error wait(int device, cudaStream_t stream, cudaEvent_t event) {
  cuda::DeviceGuard guard(device);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(stream, event, 0));
  return Error::Ok;
}

// Between two GPUs, on two streams: the caller's (home) on its device and an internal one
// on the other, which first waits for home's queued work. Pack (and convert) on the source
// GPU, peer copy and scatter on the destination GPU, then the source stream waits for the
// destination's end, so the source scratch is reused only after the copy read it.
Error copy_between_gpus(const SlimTensor& dst, const SlimTensor& src, int64_t numel,
                        const StreamContext& ctx) noexcept {
  const int from = src.device().index, to = dst.device().index;
  SLIMCUDA_CHECK_OR_RETURN(
      ctx.stream() == nullptr || ctx.device() == from || ctx.device() == to, Error::InvalidArgument,
      "the caller stream belongs to device %d, the copy is between devices %d and %d", ctx.device(), from, to);
  const int home_device = ctx.device() == to ? to : from;
  const int other_device = home_device == to ? from : to;
  cudaStream_t other = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(transfer::internal_stream(other_device, &other));
  cudaEvent_t e = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(record(home_device, 20, ctx.stream(), &e));
  SLIMCUDA_RETURN_IF_ERROR(wait(other_device, other, e));
  const cudaStream_t on_from = home_device == from ? ctx.stream() : other;
  const cudaStream_t on_to = home_device == to ? ctx.stream() : other;
  const StreamContext from_ctx = StreamContext::selected(on_from, from), to_ctx = StreamContext::selected(on_to, to);

  const Side d = side(dst), s = side(src);
  const size_t bytes = static_cast<size_t>(numel) * static_cast<size_t>(d.size);
  const std::vector<int64_t> packed = contiguous_strides(dst.sizes());
  transfer::Scratch packed_from(from_ctx), packed_to(to_ctx);
  const char* source = s.data;
  if (!(s.dtype == d.dtype && src.is_contiguous())) {
    SLIMCUDA_RETURN_IF_ERROR(packed_from.allocate(bytes));
    cuda::DeviceGuard guard(from);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_RETURN_IF_ERROR(launch_copy(packed_from.get(), d.dtype, d.size, s.data, s.dtype, s.size,
                                         make_plan(dst.sizes(), packed, src.strides()), numel, on_from));
    source = packed_from.get();
  }
  SLIMCUDA_RETURN_IF_ERROR(record(from, 21, on_from, &e));
  SLIMCUDA_RETURN_IF_ERROR(wait(to, on_to, e));
  char* target = d.data;
  if (!dst.is_contiguous()) {
    SLIMCUDA_RETURN_IF_ERROR(packed_to.allocate(bytes));
    target = packed_to.get();
  }
  SLIMCUDA_RETURN_IF_ERROR(transfer::peer_async(target, to, source, from, bytes, on_to));
  if (target != d.data) {
    cuda::DeviceGuard guard(to);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_RETURN_IF_ERROR(launch_copy(d.data, d.dtype, d.size, target, d.dtype, d.size,
                                         make_plan(dst.sizes(), dst.strides(), packed), numel, on_to));
  }
  SLIMCUDA_RETURN_IF_ERROR(record(to, 22, on_to, &e));
  SLIMCUDA_RETURN_IF_ERROR(wait(from, on_from, e));
  if (!ctx.is_selected()) {
    cuda::DeviceGuard guard(to);
    SLIMCUDA_CUDA_TRY(cudaEventSynchronize(e));
  }
  return Error::Ok;
}

}  // namespace

Error copy_tensor(const SlimTensor& dst, const SlimTensor& src, const StreamContext& ctx) noexcept {
  if (dst.sizes() != src.sizes()) {
    return set_last_error(Error::InvalidArgument, "copy_ between shapes %s and %s (no broadcasting)",
                          shape_string(dst.sizes()).c_str(), shape_string(src.sizes()).c_str());
  }
  const int64_t numel = dst.numel();
  if (numel == 0) return Error::Ok;
  SLIMCUDA_RETURN_IF_ERROR(check_no_internal_overlap(dst));
  const Side d = side(dst), s = side(src);
  const CopyPlan plan = make_plan(dst.sizes(), dst.strides(), src.strides());
  const Device dd = dst.device(), sd = src.device();

  if (!dd.is_cuda() && !sd.is_cuda()) {
    host_copy(d.data, d.dtype, d.size, s.data, s.dtype, s.size, plan, numel);
    return Error::Ok;
  }
  if (dd.is_cuda() && sd.is_cuda() && dd.index != sd.index) return copy_between_gpus(dst, src, numel, ctx);
  StreamContext on{StreamContext::unselected(-1)};
  SLIMCUDA_RETURN_IF_ERROR(ctx.on_device(dd.is_cuda() ? dd.index : sd.index, &on));
  cuda::DeviceGuard guard(on.device());
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  const bool plain = d.dtype == s.dtype && dst.is_contiguous() && src.is_contiguous();
  const size_t dst_bytes = static_cast<size_t>(numel) * static_cast<size_t>(d.size);
  const std::vector<int64_t> packed = contiguous_strides(dst.sizes());

  if (dd.is_cuda() && sd.is_cuda()) {  // one GPU: asynchronous, like a kernel launch
    if (plain) return transfer::device_to_device(d.data, s.data, dst_bytes, on);
    return launch_copy(d.data, d.dtype, d.size, s.data, s.dtype, s.size, plan, numel, on.stream());
  }

  if (dd.is_cuda()) {  // host -> device
    if (plain) return transfer::host_to_device(d.data, s.data, dst_bytes, on);
    // Convert and pack on the host, upload, then scatter on the device if dst is strided.
    std::unique_ptr<char[]> packed_host = host_buffer(dst_bytes);
    SLIMCUDA_CHECK_OR_RETURN(packed_host != nullptr, Error::MemoryAllocationFailed, "%zu-byte host staging buffer",
                             dst_bytes);
    host_copy(packed_host.get(), d.dtype, d.size, s.data, s.dtype, s.size,
              make_plan(dst.sizes(), packed, src.strides()), numel);
    if (dst.is_contiguous()) return transfer::host_to_device(d.data, packed_host.get(), dst_bytes, on);
    transfer::Scratch staging(on);
    SLIMCUDA_RETURN_IF_ERROR(staging.allocate(dst_bytes));
    SLIMCUDA_RETURN_IF_ERROR(transfer::host_to_device(staging.get(), packed_host.get(), dst_bytes, on));
    SLIMCUDA_RETURN_IF_ERROR(launch_copy(d.data, d.dtype, d.size, staging.get(), d.dtype, d.size,
                                         make_plan(dst.sizes(), dst.strides(), packed), numel, on.stream()));
    return cuda::wait_for_stream(on.stream(), on.device());  // blocking, as every host<->device copy
  }

  // device -> host
  if (plain) return transfer::device_to_host(d.data, s.data, dst_bytes, on);
  // Convert and pack on the device, download, then scatter on the host if dst is strided.
  transfer::Scratch staging(on);
  SLIMCUDA_RETURN_IF_ERROR(staging.allocate(dst_bytes));
  SLIMCUDA_RETURN_IF_ERROR(launch_copy(staging.get(), d.dtype, d.size, s.data, s.dtype, s.size,
                                       make_plan(dst.sizes(), packed, src.strides()), numel, on.stream()));
  if (dst.is_contiguous()) return transfer::device_to_host(d.data, staging.get(), dst_bytes, on);
  std::unique_ptr<char[]> packed_host = host_buffer(dst_bytes);
  SLIMCUDA_CHECK_OR_RETURN(packed_host != nullptr, Error::MemoryAllocationFailed, "%zu-byte host staging buffer",
                           dst_bytes);
  SLIMCUDA_RETURN_IF_ERROR(transfer::device_to_host(packed_host.get(), staging.get(), dst_bytes, on));
  host_copy(d.data, d.dtype, d.size, packed_host.get(), d.dtype, d.size, make_plan(dst.sizes(), dst.strides(), packed),
            numel);
  return Error::Ok;
}

}  // namespace slimcuda
