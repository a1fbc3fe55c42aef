// copy_tensor: strided, dtype-converting copies on the host and in CUDA kernels.
#include "csrc/tensor/copy.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/caller_stream.h"
#include "slimcuda/last_error.h"

namespace slimcuda {
namespace {

// Both sides' geometry, passed to kernels by value (about 600 bytes of parameters).
struct CopyPlan {
  int ndim;
  int64_t sizes[kMaxDims];
  int64_t dst_strides[kMaxDims];
  int64_t src_strides[kMaxDims];
};

// A loaded element, in the two forms conversions need.
struct Wide {
  double f;
  int64_t i;
  bool floating;
};

__host__ __device__ inline int64_t float_to_int64(double f) {
  if (!(f == f)) return 0;  // NaN
  if (f >= 9.2233720368547758e18) return INT64_MAX;
  if (f <= -9.2233720368547758e18) return INT64_MIN;
  return static_cast<int64_t>(f);
}

template <typename T>
__host__ __device__ inline T read_as(const char* p) {
  T v;
  memcpy(&v, p, sizeof(T));
  return v;
}

template <typename T>
__host__ __device__ inline void write_as(char* p, T v) {
  memcpy(p, &v, sizeof(T));
}

__host__ __device__ inline Wide load(const char* p, int dtype) {
  Wide w{0.0, 0, false};
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Byte: w.i = read_as<uint8_t>(p); break;
    case ScalarType::Char: w.i = read_as<int8_t>(p); break;
    case ScalarType::Short: w.i = read_as<int16_t>(p); break;
    case ScalarType::Int: w.i = read_as<int32_t>(p); break;
    case ScalarType::Long: w.i = read_as<int64_t>(p); break;
    case ScalarType::Bool: w.i = read_as<uint8_t>(p) != 0; break;
    case ScalarType::Half: w.f = __half2float(read_as<__half>(p)); w.floating = true; break;
    case ScalarType::BFloat16: w.f = __bfloat162float(read_as<__nv_bfloat16>(p)); w.floating = true; break;
    case ScalarType::Float: w.f = read_as<float>(p); w.floating = true; break;
    case ScalarType::Double: w.f = read_as<double>(p); w.floating = true; break;
  }
  if (w.floating) {
    w.i = float_to_int64(w.f);
  } else {
    w.f = static_cast<double>(w.i);
  }
  return w;
}

__host__ __device__ inline void store(char* p, int dtype, const Wide& w) {
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Byte: write_as<uint8_t>(p, static_cast<uint8_t>(w.i)); break;
    case ScalarType::Char: write_as<int8_t>(p, static_cast<int8_t>(w.i)); break;
    case ScalarType::Short: write_as<int16_t>(p, static_cast<int16_t>(w.i)); break;
    case ScalarType::Int: write_as<int32_t>(p, static_cast<int32_t>(w.i)); break;
    case ScalarType::Long: write_as<int64_t>(p, w.i); break;
    case ScalarType::Bool: write_as<uint8_t>(p, w.floating ? (w.f != 0.0) : (w.i != 0)); break;
    case ScalarType::Half: write_as<__half>(p, __float2half_rn(static_cast<float>(w.f))); break;
    case ScalarType::BFloat16: write_as<__nv_bfloat16>(p, __float2bfloat16_rn(static_cast<float>(w.f))); break;
    case ScalarType::Float: write_as<float>(p, static_cast<float>(w.f)); break;
    case ScalarType::Double: write_as<double>(p, w.f); break;
  }
}

// Copies one element; same dtype copies the bytes (exact for every type, NaN payloads too).
__host__ __device__ inline void copy_element(char* d, int dst_t, const char* s, int src_t, int es) {
  if (dst_t == src_t) {
    switch (es) {
      case 1: write_as<uint8_t>(d, read_as<uint8_t>(s)); break;
      case 2: write_as<uint16_t>(d, read_as<uint16_t>(s)); break;
      case 4: write_as<uint32_t>(d, read_as<uint32_t>(s)); break;
      default: write_as<uint64_t>(d, read_as<uint64_t>(s)); break;
    }
  } else {
    store(d, dst_t, load(s, src_t));
  }
}

__global__ void strided_copy_kernel(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es,
                                    CopyPlan plan, int64_t numel) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < numel; i += int64_t{gridDim.x} * blockDim.x) {
    int64_t rest = i, d_off = 0, s_off = 0;
    for (int d = plan.ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % plan.sizes[d];
      rest /= plan.sizes[d];
      d_off += idx * plan.dst_strides[d];
      s_off += idx * plan.src_strides[d];
    }
    copy_element(dst + d_off * dst_es, dst_t, src + s_off * src_es, src_t, dst_es);
  }
}

// The plan for dst <- src with the given strides (size-1 dimensions dropped).
CopyPlan make_plan(const std::vector<int64_t>& sizes, const std::vector<int64_t>& dst_strides,
                   const std::vector<int64_t>& src_strides) {
  CopyPlan p{};
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) continue;
    p.sizes[p.ndim] = sizes[d];
    p.dst_strides[p.ndim] = dst_strides[d];
    p.src_strides[p.ndim] = src_strides[d];
    ++p.ndim;
  }
  return p;
}

// Host loop with an odometer over the indices (no division per element).
void host_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& p,
               int64_t numel) {
  int64_t idx[kMaxDims] = {0};
  int64_t d_off = 0, s_off = 0;
  for (int64_t n = 0; n < numel; ++n) {
    copy_element(dst + d_off * dst_es, dst_t, src + s_off * src_es, src_t, dst_es);
    for (int d = p.ndim - 1; d >= 0; --d) {
      if (++idx[d] < p.sizes[d]) {
        d_off += p.dst_strides[d];
        s_off += p.src_strides[d];
        break;
      }
      d_off -= (p.sizes[d] - 1) * p.dst_strides[d];
      s_off -= (p.sizes[d] - 1) * p.src_strides[d];
      idx[d] = 0;
    }
  }
}

Error launch_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& plan,
                  int64_t numel, cudaStream_t stream, const char* function) noexcept {
  constexpr int kThreads = 256;
  const int64_t blocks = std::min<int64_t>((numel + kThreads - 1) / kThreads, 65535);
  strided_copy_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(dst, dst_t, dst_es, src, src_t, src_es,
                                                                               plan, numel);
  SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
  return Error::Ok;
}

// Temporary device memory, ordered on `stream` (cudaMallocAsync / cudaFreeAsync).
class StreamBuffer {
 public:
  StreamBuffer(cudaStream_t stream) : stream_(stream) {}
  ~StreamBuffer() {
    if (ptr_ != nullptr && cudaFreeAsync(ptr_, stream_) != cudaSuccess) (void)cudaGetLastError();
  }
  StreamBuffer(const StreamBuffer&) = delete;
  StreamBuffer& operator=(const StreamBuffer&) = delete;
  Error allocate(size_t n, const char* function) noexcept {
    const cudaError_t err = cudaMallocAsync(&ptr_, n, stream_);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      ptr_ = nullptr;
      return set_last_error(err == cudaErrorMemoryAllocation ? Error::MemoryAllocationFailed : Error::Internal,
                            function, "temporary device buffer of %zu bytes: %s", n, cudaGetErrorString(err));
    }
    return Error::Ok;
  }
  char* get() const noexcept { return static_cast<char*>(ptr_); }

 private:
  cudaStream_t stream_;
  void* ptr_ = nullptr;
};

std::unique_ptr<char[]> host_buffer(size_t n) { return std::unique_ptr<char[]>(new (std::nothrow) char[n]); }

std::string shape_string(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

Error copy_tensor(const SlimTensor& dst, const SlimTensor& src, const char* function) noexcept {
  if (dst.sizes() != src.sizes()) {
    return set_last_error(Error::InvalidArgument, function, "copy_ between shapes %s and %s (no broadcasting)",
                          shape_string(dst.sizes()).c_str(), shape_string(src.sizes()).c_str());
  }
  const int64_t numel = dst.numel();
  if (numel == 0) return Error::Ok;
  char* d = static_cast<char*>(dst.data_ptr());
  const char* s = static_cast<const char*>(src.data_ptr());
  const int dt = static_cast<int>(dst.dtype()), st = static_cast<int>(src.dtype());
  const int des = static_cast<int>(dst.element_size()), ses = static_cast<int>(src.element_size());
  const CopyPlan plan = make_plan(dst.sizes(), dst.strides(), src.strides());
  const Device dd = dst.device(), sd = src.device();

  if (!dd.is_cuda() && !sd.is_cuda()) {
    host_copy(d, dt, des, s, st, ses, plan, numel);
    return Error::Ok;
  }
  SLIMCUDA_CHECK_OR_RETURN_AT(function, !(dd.is_cuda() && sd.is_cuda() && dd.index != sd.index),
                              Error::NotSupported, "copy_ between GPUs %d and %d is not supported", sd.index,
                              dd.index);
  const int gpu = dd.is_cuda() ? dd.index : sd.index;
  const cudaStream_t stream = getCallerStream().value_or(nullptr);
  int device = -1;
  SLIMCUDA_RETURN_IF_ERROR(cuda::resolve_device_for_stream(gpu, stream, &device));
  cuda::DeviceGuard guard(device);
  SLIMCUDA_RETURN_IF_ERROR(guard.error());
  const bool plain = dt == st && dst.is_contiguous() && src.is_contiguous();
  const size_t dst_bytes = static_cast<size_t>(numel) * des;
  const std::vector<int64_t> packed = contiguous_strides(dst.sizes());

  if (dd.is_cuda() && sd.is_cuda()) {  // one GPU: asynchronous, like a kernel launch
    if (plain) {
      SLIMCUDA_CUDA_TRY_AT(function, cudaMemcpyAsync(d, s, dst_bytes, cudaMemcpyDeviceToDevice, stream));
      return Error::Ok;
    }
    return launch_copy(d, dt, des, s, st, ses, plan, numel, stream, function);
  }

  if (dd.is_cuda()) {  // host -> device
    if (plain) {
      SLIMCUDA_CUDA_TRY_AT(function, cudaMemcpyAsync(d, s, dst_bytes, cudaMemcpyHostToDevice, stream));
      return cuda::wait_for_stream(stream, device);
    }
    // Convert and pack on the host, upload, then scatter on the device if dst is strided.
    std::unique_ptr<char[]> packed_host = host_buffer(dst_bytes);
    SLIMCUDA_CHECK_OR_RETURN_AT(function, packed_host != nullptr, Error::MemoryAllocationFailed,
                                "%zu-byte host staging buffer", dst_bytes);
    host_copy(packed_host.get(), dt, des, s, st, ses, make_plan(dst.sizes(), packed, src.strides()), numel);
    if (dst.is_contiguous()) {
      SLIMCUDA_CUDA_TRY_AT(function, cudaMemcpyAsync(d, packed_host.get(), dst_bytes, cudaMemcpyHostToDevice, stream));
      return cuda::wait_for_stream(stream, device);
    }
    StreamBuffer staging(stream);
    SLIMCUDA_RETURN_IF_ERROR(staging.allocate(dst_bytes, function));
    SLIMCUDA_CUDA_TRY_AT(function,
                         cudaMemcpyAsync(staging.get(), packed_host.get(), dst_bytes, cudaMemcpyHostToDevice, stream));
    SLIMCUDA_RETURN_IF_ERROR(launch_copy(d, dt, des, staging.get(), dt, des,
                                         make_plan(dst.sizes(), dst.strides(), packed), numel, stream, function));
    return cuda::wait_for_stream(stream, device);  // the host buffer lives until here
  }

  // device -> host
  if (plain) {
    SLIMCUDA_CUDA_TRY_AT(function, cudaMemcpyAsync(d, s, dst_bytes, cudaMemcpyDeviceToHost, stream));
    return cuda::wait_for_stream(stream, device);
  }
  // Convert and pack on the device, download, then scatter on the host if dst is strided.
  StreamBuffer staging(stream);
  SLIMCUDA_RETURN_IF_ERROR(staging.allocate(dst_bytes, function));
  SLIMCUDA_RETURN_IF_ERROR(launch_copy(staging.get(), dt, des, s, st, ses,
                                       make_plan(dst.sizes(), packed, src.strides()), numel, stream, function));
  if (dst.is_contiguous()) {
    SLIMCUDA_CUDA_TRY_AT(function, cudaMemcpyAsync(d, staging.get(), dst_bytes, cudaMemcpyDeviceToHost, stream));
    return cuda::wait_for_stream(stream, device);
  }
  std::unique_ptr<char[]> packed_host = host_buffer(dst_bytes);
  SLIMCUDA_CHECK_OR_RETURN_AT(function, packed_host != nullptr, Error::MemoryAllocationFailed,
                              "%zu-byte host staging buffer", dst_bytes);
  SLIMCUDA_CUDA_TRY_AT(function,
                       cudaMemcpyAsync(packed_host.get(), staging.get(), dst_bytes, cudaMemcpyDeviceToHost, stream));
  SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(stream, device));
  host_copy(d, dt, des, packed_host.get(), dt, des, make_plan(dst.sizes(), dst.strides(), packed), numel);
  return Error::Ok;
}

}  // namespace slimcuda
