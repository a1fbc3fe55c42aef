// copy_tensor: strided, dtype-converting copies on the host and in CUDA kernels.
#include "csrc/tensor/copy.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <utility>
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

// IEEE half and bfloat16 conversions, round to nearest even, in plain integer code: the
// host and the device run exactly the same code, so CPU and GPU copies agree bit for bit.
__host__ __device__ inline uint32_t float_bits(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  return x;
}

__host__ __device__ inline float bits_float(uint32_t x) {
  float f;
  memcpy(&f, &x, 4);
  return f;
}

__host__ __device__ inline uint16_t float_to_half(float f) {
  const uint32_t x = float_bits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
  if (abs >= 0x47800000u) return static_cast<uint16_t>(sign | 0x7c00u); // >= 65536 or inf
  const int exp = static_cast<int>(abs >> 23) - 112;                     // half's biased exponent
  uint32_t mant = abs & 0x7fffffu;
  if (exp <= 0) {  // a half subnormal (or zero)
    if (exp < -10) return static_cast<uint16_t>(sign);
    mant |= 0x800000u;
    const uint32_t shift = static_cast<uint32_t>(14 - exp);
    uint32_t m = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (m & 1u))) ++m;
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t m = mant >> 13;
  const uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (m & 1u))) ++m;
  const uint32_t h = (static_cast<uint32_t>(exp) << 10) + m;  // a mantissa carry bumps the exponent
  return static_cast<uint16_t>(sign | (h >= 0x7c00u ? 0x7c00u : h));
}

__host__ __device__ inline float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1fu) return bits_float(sign | 0x7f800000u | (mant << 13));
  if (exp != 0) return bits_float(sign | ((exp + 112) << 23) | (mant << 13));
  if (mant == 0) return bits_float(sign);
  exp = 113;  // subnormal: normalize
  while (!(mant & 0x400u)) {
    mant <<= 1;
    --exp;
  }
  return bits_float(sign | (exp << 23) | ((mant & 0x3ffu) << 13));
}

__host__ __device__ inline uint16_t float_to_bfloat16(float f) {
  const uint32_t x = float_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

__host__ __device__ inline float bfloat16_to_float(uint16_t b) { return bits_float(static_cast<uint32_t>(b) << 16); }

__host__ __device__ inline Wide load(const char* p, int dtype) {
  Wide w{0.0, 0, false};
  switch (static_cast<ScalarType>(dtype)) {
    case ScalarType::Byte: w.i = read_as<uint8_t>(p); break;
    case ScalarType::Char: w.i = read_as<int8_t>(p); break;
    case ScalarType::Short: w.i = read_as<int16_t>(p); break;
    case ScalarType::Int: w.i = read_as<int32_t>(p); break;
    case ScalarType::Long: w.i = read_as<int64_t>(p); break;
    case ScalarType::Bool: w.i = read_as<uint8_t>(p) != 0; break;
    case ScalarType::Half: w.f = half_to_float(read_as<uint16_t>(p)); w.floating = true; break;
    case ScalarType::BFloat16: w.f = bfloat16_to_float(read_as<uint16_t>(p)); w.floating = true; break;
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
    case ScalarType::Half: write_as<uint16_t>(p, float_to_half(static_cast<float>(w.f))); break;
    case ScalarType::BFloat16: write_as<uint16_t>(p, float_to_bfloat16(static_cast<float>(w.f))); break;
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

// A 2-D copy whose source is contiguous along dimension 0 and whose destination is
// contiguous along dimension 1 (a transpose): 32x32 tiles through shared memory, so both
// the reads and the writes are coalesced. The naive kernel gets a fraction of the
// bandwidth here because one side is read or written with a large stride.
constexpr int kTile = 32, kTileRows = 8;

template <typename T>
__global__ void transpose_tile_kernel(T* dst, int64_t dst_s0, const T* src, int64_t src_s1, int64_t rows,
                                      int64_t cols) {
  __shared__ T tile[kTile][kTile + 1];  // +1: no shared-memory bank conflicts on the column reads
  const int64_t r0 = int64_t{blockIdx.y} * kTile, c0 = int64_t{blockIdx.x} * kTile;
  for (int k = 0; k < kTile; k += kTileRows) {
    const int64_t r = r0 + threadIdx.x, c = c0 + threadIdx.y + k;
    if (r < rows && c < cols) tile[threadIdx.y + k][threadIdx.x] = src[r + c * src_s1];
  }
  __syncthreads();
  for (int k = 0; k < kTile; k += kTileRows) {
    const int64_t c = c0 + threadIdx.x, r = r0 + threadIdx.y + k;
    if (r < rows && c < cols) dst[r * dst_s0 + c] = tile[threadIdx.x][threadIdx.y + k];
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

template <typename T>
void launch_transpose(char* dst, int64_t dst_s0, const char* src, int64_t src_s1, int64_t rows, int64_t cols,
                      cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile), static_cast<unsigned>((rows + kTile - 1) / kTile));
  transpose_tile_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(
      reinterpret_cast<T*>(dst), dst_s0, reinterpret_cast<const T*>(src), src_s1, rows, cols);
}

// Launches the tiled transpose when the plan is one (same dtype, 2-D, one side contiguous
// along each dimension); returns false to fall back to the general kernel.
bool try_transpose(char* dst, const char* src, int es, CopyPlan p, cudaStream_t stream) {
  if (p.ndim != 2) return false;
  if (!(p.src_strides[0] == 1 && p.dst_strides[1] == 1)) {  // the mirror case: swap the dimensions
    std::swap(p.sizes[0], p.sizes[1]);
    std::swap(p.src_strides[0], p.src_strides[1]);
    std::swap(p.dst_strides[0], p.dst_strides[1]);
    if (!(p.src_strides[0] == 1 && p.dst_strides[1] == 1)) return false;
  }
  if ((p.sizes[0] + kTile - 1) / kTile > 65535 || (p.sizes[1] + kTile - 1) / kTile > INT32_MAX) return false;
  switch (es) {
    case 1: launch_transpose<uint8_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream); break;
    case 2: launch_transpose<uint16_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream); break;
    case 4: launch_transpose<uint32_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream); break;
    case 8: launch_transpose<uint64_t>(dst, p.dst_strides[0], src, p.src_strides[1], p.sizes[0], p.sizes[1], stream); break;
    default: return false;
  }
  return true;
}

Error launch_copy(char* dst, int dst_t, int dst_es, const char* src, int src_t, int src_es, const CopyPlan& plan,
                  int64_t numel, cudaStream_t stream, const char* function) noexcept {
  if (dst_t == src_t && try_transpose(dst, src, dst_es, plan, stream)) {
    SLIMCUDA_CUDA_TRY_AT(function, cudaGetLastError());
    return Error::Ok;
  }
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

// Between two GPUs: pack (and convert) on the source GPU, copy peer to peer, scatter on the
// destination GPU. Blocking: it first waits for the caller stream (whichever GPU it is on),
// so data a kernel is still writing there is complete, and returns when dst is written.
Error copy_between_gpus(const SlimTensor& dst, const SlimTensor& src, int64_t numel, const char* function) noexcept {
  const int from = src.device().index, to = dst.device().index;
  const int dt = static_cast<int>(dst.dtype()), st = static_cast<int>(src.dtype());
  const int des = static_cast<int>(dst.element_size()), ses = static_cast<int>(src.element_size());
  const size_t bytes = static_cast<size_t>(numel) * des;
  const std::vector<int64_t> packed = contiguous_strides(dst.sizes());
  const std::optional<cudaStream_t> caller = getCallerStream();
  if (caller.has_value() && *caller != nullptr) {
    int owner = -1;
    SLIMCUDA_RETURN_IF_ERROR(cuda::stream_device(*caller, &owner));
    SLIMCUDA_CHECK_OR_RETURN_AT(function, owner == from || owner == to, Error::InvalidArgument,
                                "caller stream belongs to device %d, the copy is between devices %d and %d", owner,
                                from, to);
    cuda::DeviceGuard guard(owner);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_RETURN_IF_ERROR(cuda::wait_for_stream(*caller, owner));
  }
  void* a = nullptr;
  void* b = nullptr;
  Error e = Error::Ok;
  {
    cuda::DeviceGuard guard(from);
    SLIMCUDA_RETURN_IF_ERROR(guard.error());
    SLIMCUDA_CUDA_TRY_AT(function, cudaMalloc(&a, bytes));
    e = launch_copy(static_cast<char*>(a), dt, des, static_cast<const char*>(src.data_ptr()), st, ses,
                    make_plan(dst.sizes(), packed, src.strides()), numel, nullptr, function);
    if (e == Error::Ok && cudaStreamSynchronize(nullptr) != cudaSuccess) {
      e = set_last_error(Error::Internal, function, "packing on device %d failed: %s", from,
                         cudaGetErrorString(cudaGetLastError()));
    }
  }
  if (e == Error::Ok) {
    cuda::DeviceGuard guard(to);
    e = guard.error();
    if (e == Error::Ok && cudaMalloc(&b, bytes) != cudaSuccess) {
      b = nullptr;
      e = set_last_error(Error::MemoryAllocationFailed, function, "%zu bytes on device %d: %s", bytes, to,
                         cudaGetErrorString(cudaGetLastError()));
    }
    if (e == Error::Ok && cudaMemcpyPeer(b, to, a, from, bytes) != cudaSuccess) {
      e = set_last_error(Error::Internal, function, "peer copy %d -> %d: %s", from, to,
                         cudaGetErrorString(cudaGetLastError()));
    }
    if (e == Error::Ok) {
      e = launch_copy(static_cast<char*>(dst.data_ptr()), dt, des, static_cast<const char*>(b), dt, des,
                      make_plan(dst.sizes(), dst.strides(), packed), numel, nullptr, function);
    }
    if (e == Error::Ok && cudaStreamSynchronize(nullptr) != cudaSuccess) {
      e = set_last_error(Error::Internal, function, "scatter on device %d failed: %s", to,
                         cudaGetErrorString(cudaGetLastError()));
    }
    if (b != nullptr && cudaFree(b) != cudaSuccess) (void)cudaGetLastError();
  }
  {
    cuda::DeviceGuard guard(from);
    if (a != nullptr && cudaFree(a) != cudaSuccess) (void)cudaGetLastError();
  }
  return e;
}

// Whether t's elements may alias, so writing them in turn is ill-defined and unbounded by
// t's storage: a dimension of size > 1 with stride 0 (PyTorch's MemOverlap::Yes), or more
// elements than the storage span they reach (then two must share a slot). What passes has
// numel <= span <= storage elements, so a copy into it does work bounded by its storage.
Error check_no_internal_overlap(const SlimTensor& t, const char* function) noexcept {
  for (int64_t d = 0; d < t.dim(); ++d) {
    SLIMCUDA_CHECK_OR_RETURN_AT(function, t.sizes()[d] <= 1 || t.strides()[d] != 0, Error::InvalidArgument,
                                "the destination has overlapping elements (dimension %lld: size %lld, stride 0)",
                                static_cast<long long>(d), static_cast<long long>(t.sizes()[d]));
  }
  int64_t span = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_elements(t.dim(), t.sizes().data(), t.strides().data(), 0, &span, function));
  SLIMCUDA_CHECK_OR_RETURN_AT(function, t.numel() <= span, Error::InvalidArgument,
                              "the destination has overlapping elements (%lld elements in a span of %lld)",
                              static_cast<long long>(t.numel()), static_cast<long long>(span));
  return Error::Ok;
}

}  // namespace

Error copy_tensor(const SlimTensor& dst, const SlimTensor& src, const char* function) noexcept {
  if (dst.sizes() != src.sizes()) {
    return set_last_error(Error::InvalidArgument, function, "copy_ between shapes %s and %s (no broadcasting)",
                          shape_string(dst.sizes()).c_str(), shape_string(src.sizes()).c_str());
  }
  const int64_t numel = dst.numel();
  if (numel == 0) return Error::Ok;
  SLIMCUDA_RETURN_IF_ERROR(check_no_internal_overlap(dst, function));
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
  if (dd.is_cuda() && sd.is_cuda() && dd.index != sd.index) {
    return copy_between_gpus(dst, src, numel, function);
  }
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
