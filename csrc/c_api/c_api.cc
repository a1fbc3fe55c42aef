// SPDX-License-Identifier: Apache-2.0
// The C ABI (slimcuda.h) over the C++ components. Every entry point is noexcept in effect:
// exceptions (std::bad_alloc from the standard library) become error codes here.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <exception>
#include <new>
#include <optional>

#include "csrc/core/device_index.h"
#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/demo_kernels/kernels.h"
#include "csrc/entry/c_entry.h"
#include "csrc/entry/caller_context.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/pinned_pool.h"
#include "csrc/memory/retire_stream.h"
#include "csrc/memory/transfer.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/error.h"
#include "slimcuda/last_error.h"
#include "slimcuda/slimcuda.h"

namespace slimcuda {
namespace {

static_assert(SLIMCUDA_OK == static_cast<int>(Error::Ok));
static_assert(SLIMCUDA_ERROR_INTERNAL == static_cast<int>(Error::Internal));
static_assert(SLIMCUDA_ERROR_INVALID_STATE == static_cast<int>(Error::InvalidState));
static_assert(SLIMCUDA_ERROR_NOT_SUPPORTED == static_cast<int>(Error::NotSupported));
static_assert(SLIMCUDA_ERROR_NOT_IMPLEMENTED == static_cast<int>(Error::NotImplemented));
static_assert(SLIMCUDA_ERROR_INVALID_ARGUMENT == static_cast<int>(Error::InvalidArgument));
static_assert(SLIMCUDA_ERROR_INVALID_TYPE == static_cast<int>(Error::InvalidType));
static_assert(SLIMCUDA_ERROR_NOT_FOUND == static_cast<int>(Error::NotFound));
static_assert(SLIMCUDA_ERROR_MEMORY_ALLOCATION_FAILED == static_cast<int>(Error::MemoryAllocationFailed));
static_assert(SLIMCUDA_ERROR_ACCESS_FAILED == static_cast<int>(Error::AccessFailed));
static_assert(SLIMCUDA_ERROR_INVALID_PROGRAM == static_cast<int>(Error::InvalidProgram));
static_assert(SLIMCUDA_ERROR_OUT_OF_RESOURCES == static_cast<int>(Error::OutOfResources));
static_assert(sizeof(void*) == sizeof(cudaStream_t));

// Per-thread stack of the selections that slimcuda_caller_stream_push replaced.
struct PushedSelections {
  static constexpr int kMaxDepth = 64;
  std::optional<cudaStream_t> saved[kMaxDepth];
  int depth = 0;
};
thread_local PushedSelections tls_pushed;

// Checks that `ptr` is device memory of `device`, so a bad pointer is an
// InvalidArgument instead of a fault that poisons the CUDA context.
Error check_device_buffer(const void* ptr, const char* name, int device) noexcept {
  if (ptr == nullptr) return set_last_error(Error::InvalidArgument, "null %s", name);
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return set_last_error(Error::InvalidArgument, "%s is not CUDA memory: %s", name, cudaGetErrorString(err));
  }
  if (attr.type != cudaMemoryTypeDevice && attr.type != cudaMemoryTypeManaged) {
    return set_last_error(Error::InvalidArgument, "%s is not device memory", name);
  }
  if (attr.device != device) {
    return set_last_error(Error::InvalidArgument, "%s is memory of device %d, not %d", name, attr.device, device);
  }
  return Error::Ok;
}

slimcuda_memory_stats to_c(const PoolStats& s) noexcept {
  return slimcuda_memory_stats{
      s.allocated_bytes, s.peak_allocated_bytes, s.reserved_bytes, s.peak_reserved_bytes, s.allocations, s.frees,
      s.cache_hits,      s.cache_misses,         s.segments,       s.oom_retries};
}

Error require_gpu() noexcept {
  if (cuda::device_count() == 0) {
    return set_last_error(Error::NotSupported, "no CUDA device (no GPU or no driver)");
  }
  return Error::Ok;
}

// The blocking copies' shared body: the checks in the contract's order, then the engine.
Error copy(void* dst, const void* src, size_t nbytes, int32_t device_index, bool to_device) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(dst != nullptr && src != nullptr, Error::InvalidArgument, "null %s",
                           dst == nullptr ? "dst" : "src");
  StreamContext ctx = StreamContext::unselected(-1);
  SLIMCUDA_RETURN_IF_ERROR(caller_context(device_index, &ctx));
  return to_device ? transfer::host_to_device(dst, src, nbytes, ctx) : transfer::device_to_host(dst, src, nbytes, ctx);
}

}  // namespace
}  // namespace slimcuda

using namespace slimcuda;  // NOLINT: the C entry points below are thin shells

extern "C" {

const char* slimcuda_last_error_message(void) { return last_error_message(); }

const char* slimcuda_version(void) { return SLIMCUDA_VERSION_STRING; }

const char* slimcuda_error_name(int32_t code) { return error_name(static_cast<Error>(code)); }

int32_t slimcuda_device_count(int32_t* count) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(count != nullptr, Error::InvalidArgument, "null count");
    *count = cuda::device_count();
    return Error::Ok;
  });
}

int32_t slimcuda_cuda_versions(int32_t* runtime, int32_t* driver) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(runtime != nullptr && driver != nullptr, Error::InvalidArgument, "null %s",
                             runtime == nullptr ? "runtime" : "driver");
    int r = 0, d = 0;
    SLIMCUDA_CUDA_TRY(cudaRuntimeGetVersion(&r));
    SLIMCUDA_CUDA_TRY(cudaDriverGetVersion(&d));
    *runtime = r;
    *driver = d;
    return Error::Ok;
  });
}

int32_t slimcuda_device_properties(int32_t device_index, char* name, size_t name_capacity, uint64_t* total_memory,
                                   int32_t* cc_major, int32_t* cc_minor) {
  return c_entry(__func__, [&]() {
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    cudaDeviceProp prop{};
    SLIMCUDA_CUDA_TRY(cudaGetDeviceProperties(&prop, device));
    if (name != nullptr && name_capacity > 0) {
      std::snprintf(name, name_capacity, "%s", prop.name);
    }
    if (total_memory != nullptr) *total_memory = prop.totalGlobalMem;
    if (cc_major != nullptr) *cc_major = prop.major;
    if (cc_minor != nullptr) *cc_minor = prop.minor;
    return Error::Ok;
  });
}

int32_t slimcuda_caller_stream_push(void* stream) {
  return c_entry(__func__, [&]() {
    PushedSelections& p = tls_pushed;
    SLIMCUDA_CHECK_OR_RETURN(p.depth < PushedSelections::kMaxDepth, Error::OutOfResources,
                             "more than %d nested pushes on this thread", PushedSelections::kMaxDepth);
    p.saved[p.depth++] = detail::exchange_caller_stream(static_cast<cudaStream_t>(stream));
    return Error::Ok;
  });
}

int32_t slimcuda_caller_stream_pop(void) {
  return c_entry(__func__, [&]() {
    PushedSelections& p = tls_pushed;
    SLIMCUDA_CHECK_OR_RETURN(p.depth > 0, Error::InvalidState, "nothing pushed on this thread");
    detail::exchange_caller_stream(p.saved[--p.depth]);
    return Error::Ok;
  });
}

int32_t slimcuda_caller_stream_get(void** stream, int32_t* is_set) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(stream != nullptr && is_set != nullptr, Error::InvalidArgument, "null %s",
                             stream == nullptr ? "stream" : "is_set");
    const std::optional<cudaStream_t> s = getCallerStream();
    *stream = s.value_or(nullptr);
    *is_set = s.has_value() ? 1 : 0;
    return Error::Ok;
  });
}

int32_t slimcuda_stream_create(int32_t flags, int32_t device_index, void** stream) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(stream != nullptr, Error::InvalidArgument, "null stream");
    SLIMCUDA_CHECK_OR_RETURN(flags == SLIMCUDA_STREAM_DEFAULT || flags == SLIMCUDA_STREAM_NON_BLOCKING,
                             Error::InvalidArgument, "unknown stream flags %d", flags);
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    cuda::DeviceGuard guard(device);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    cudaStream_t s = nullptr;
    SLIMCUDA_CUDA_TRY(cudaStreamCreateWithFlags(
        &s, flags == SLIMCUDA_STREAM_NON_BLOCKING ? cudaStreamNonBlocking : cudaStreamDefault));
    *stream = s;
    return Error::Ok;
  });
}

int32_t slimcuda_stream_destroy(void* stream) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(stream != nullptr, Error::InvalidArgument,
                             "null is the legacy default stream, which cannot be destroyed");
    memory::retire_stream(stream);  // cached memory must not keep the stream's address
    SLIMCUDA_CUDA_TRY(cudaStreamDestroy(static_cast<cudaStream_t>(stream)));
    return Error::Ok;
  });
}

int32_t slimcuda_stream_release(void* stream) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(stream != nullptr, Error::InvalidArgument,
                             "null is the legacy default stream, which never goes away");
    memory::retire_stream(stream);
    return Error::Ok;
  });
}

int32_t slimcuda_stream_synchronize(void* stream) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_RETURN_IF_ERROR(require_gpu());
    SLIMCUDA_CUDA_TRY(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    return Error::Ok;
  });
}

int32_t slimcuda_stream_device(void* stream, int32_t* device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(device_index != nullptr, Error::InvalidArgument, "null device_index");
    SLIMCUDA_RETURN_IF_ERROR(require_gpu());
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::stream_device(static_cast<cudaStream_t>(stream), &device));
    *device_index = device;
    return Error::Ok;
  });
}

int32_t slimcuda_device_alloc(size_t nbytes, int32_t device_index, size_t alignment, void** out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
    *out = nullptr;
    // The contract's order: alignment, then the index, then the GPU.
    SLIMCUDA_CHECK_OR_RETURN(alignment == 0 || (alignment & (alignment - 1)) == 0, Error::InvalidArgument,
                             "alignment %zu is not a power of two", alignment);
    SLIMCUDA_RETURN_IF_ERROR(check_device_index(device_index));
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    // Blocks are ordered on the caller stream when it is this device's (else its legacy
    // default stream); the selection is read here, once.
    StreamContext ctx = StreamContext::unselected(device);
    if (caller_context(-1, &ctx) != Error::Ok) ctx = StreamContext::unselected(device);
    Result<void*> r = device_memory::allocate(nbytes, alignment, ctx.for_allocation(device));
    if (!r.ok()) return r.error();
    *out = r.value();
    return Error::Ok;
  });
}

int32_t slimcuda_memory_stats_get(int32_t device_index, slimcuda_memory_stats* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    *out = to_c(device_memory::stats(device));
    return Error::Ok;
  });
}

int32_t slimcuda_empty_cache(int32_t device_index) {
  return c_entry(__func__, [&]() {
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    device_memory::empty_cache(device);
    return Error::Ok;
  });
}

int32_t slimcuda_pinned_memory_stats_get(slimcuda_memory_stats* out) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
    SLIMCUDA_RETURN_IF_ERROR(require_gpu());
    *out = to_c(pinned_memory_stats());
    return Error::Ok;
  });
}

int32_t slimcuda_pinned_empty_cache(void) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_RETURN_IF_ERROR(require_gpu());
    pinned_empty_cache();
    return Error::Ok;
  });
}

int32_t slimcuda_device_free(void* ptr, int32_t device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_RETURN_IF_ERROR(check_device_index(device_index));
    if (ptr == nullptr) return Error::Ok;
    int device = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device(device_index, &device));
    return device_memory::free(ptr, device);  // the one free path, also the tensors'
  });
}

int32_t slimcuda_copy_host_to_device(void* dst, const void* src, size_t nbytes, int32_t device_index) {
  return c_entry(__func__, [&]() { return copy(dst, src, nbytes, device_index, true); });
}

int32_t slimcuda_copy_device_to_host(void* dst, const void* src, size_t nbytes, int32_t device_index) {
  return c_entry(__func__, [&]() { return copy(dst, src, nbytes, device_index, false); });
}

int32_t slimcuda_copy_host_to_device_on(void* dst, const void* src, size_t nbytes, int32_t device_index, void* stream) {
  return with_stream(stream, [&] { return slimcuda_copy_host_to_device(dst, src, nbytes, device_index); });
}

int32_t slimcuda_copy_device_to_host_on(void* dst, const void* src, size_t nbytes, int32_t device_index, void* stream) {
  return with_stream(stream, [&] { return slimcuda_copy_device_to_host(dst, src, nbytes, device_index); });
}

int32_t slimcuda_fill_f32(void* dst, size_t n, float value, int32_t device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr, Error::InvalidArgument, "null dst");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context(device_index, &ctx));
    if (n == 0) return Error::Ok;
    SLIMCUDA_RETURN_IF_ERROR(check_device_buffer(dst, "dst", ctx.device()));
    cuda::DeviceGuard guard(ctx.device());
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    return kernels::fill_f32(static_cast<float*>(dst), n, value, ctx.stream());
  });
}

int32_t slimcuda_axpy_f32(void* y, const void* x, size_t n, float a, int32_t device_index) {
  return c_entry(__func__, [&]() {
    SLIMCUDA_CHECK_OR_RETURN(y != nullptr && x != nullptr, Error::InvalidArgument, "null %s", y == nullptr ? "y" : "x");
    StreamContext ctx = StreamContext::unselected(-1);
    SLIMCUDA_RETURN_IF_ERROR(caller_context(device_index, &ctx));
    if (n == 0) return Error::Ok;
    SLIMCUDA_RETURN_IF_ERROR(check_device_buffer(y, "y", ctx.device()));
    SLIMCUDA_RETURN_IF_ERROR(check_device_buffer(x, "x", ctx.device()));
    cuda::DeviceGuard guard(ctx.device());
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    return kernels::axpy_f32(static_cast<float*>(y), static_cast<const float*>(x), n, a, ctx.stream());
  });
}

int32_t slimcuda_fill_f32_on(void* dst, size_t n, float value, int32_t device_index, void* stream) {
  return with_stream(stream, [&] { return slimcuda_fill_f32(dst, n, value, device_index); });
}

int32_t slimcuda_axpy_f32_on(void* y, const void* x, size_t n, float a, int32_t device_index, void* stream) {
  return with_stream(stream, [&] { return slimcuda_axpy_f32(y, x, n, a, device_index); });
}

}  // extern "C"
