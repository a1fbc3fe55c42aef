// SPDX-License-Identifier: Apache-2.0
#pragma once

// slimcuda.hpp — C++17 over the C ABI (slimcuda.h): RAII owners for models, tensors and
// streams, errors as exceptions. Header-only: it adds no symbol to libslimcuda.so, and a
// program built against it needs only the library the C header needs.
//
//   slimcuda::Model model("model.pt2");
//   auto x = slimcuda::Tensor::from<float>({2, 4}, input, model.device());  // input: std::vector<float>
//   std::vector<slimcuda::Tensor> outs = model.run({&x});
//   std::vector<float> y = outs[0].to_vector<float>();
//
// Errors: every failed call throws slimcuda::Exception, which carries the C code
// (slimcuda::ErrorCode) and the library's message. Exceptions rather than an
// std::expected-style result: std::expected is C++23 and this header is C++17; an owner
// whose constructor can fail would need a factory and a "not loaded" state; and the C ABI
// under it already is the code-returning interface for programs that want no exceptions.
// The exception is not called slimcuda::Error because that is the name of the code enum
// inside slimcuda's own sources, which slimcuda's tests include beside this header.
// Destructors never throw: a failure to free is ignored there.
//
// Ownership: Model, Tensor and Stream are move-only owners of one handle each; a moved-from
// object owns nothing (get() is null) and every call that needs the handle throws
// ErrorCode::InvalidArgument (the C ABI's answer to a null handle) or, for Stream,
// InvalidState. A Tensor's memory goes with the last view of its storage.
//
// Streams: a call without a stream argument runs on the thread's caller stream (a
// slimcuda::CallerStreamGuard of <slimcuda/caller_stream.h>, or slimcuda_caller_stream_push)
// when one is selected, else as the C ABI describes for that call. A call given a
// StreamView selects that stream for the one call (allocation included) and restores the
// previous selection before it returns. Host copies are blocking: the host memory may be
// reused when the call returns.
//
// Threads: as in slimcuda.h. A Model may run from several threads at once; a Tensor may be
// read from several threads at once; destroying either must not race with its other uses.
//
// Names live in an inline namespace, so that they are slimcuda::Model for users while
// their symbols can never collide with the library's internal classes of the same names.

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "slimcuda/slimcuda.h"

namespace slimcuda {
inline namespace cxx_v0 {

// ---- Errors ------------------------------------------------------------------------------

/// The C ABI's error codes (SLIMCUDA_ERROR_*), ABI-stable.
enum class ErrorCode : int32_t {
  Ok = SLIMCUDA_OK,
  Internal = SLIMCUDA_ERROR_INTERNAL,
  InvalidState = SLIMCUDA_ERROR_INVALID_STATE,
  NotSupported = SLIMCUDA_ERROR_NOT_SUPPORTED,
  NotImplemented = SLIMCUDA_ERROR_NOT_IMPLEMENTED,
  InvalidArgument = SLIMCUDA_ERROR_INVALID_ARGUMENT,
  InvalidType = SLIMCUDA_ERROR_INVALID_TYPE,
  NotFound = SLIMCUDA_ERROR_NOT_FOUND,
  MemoryAllocationFailed = SLIMCUDA_ERROR_MEMORY_ALLOCATION_FAILED,
  AccessFailed = SLIMCUDA_ERROR_ACCESS_FAILED,
  InvalidProgram = SLIMCUDA_ERROR_INVALID_PROGRAM,
  OutOfResources = SLIMCUDA_ERROR_OUT_OF_RESOURCES,
};

/// A failed slimcuda call. what() reads "InvalidArgument: slimcuda_tensor_empty: ...".
class Exception : public std::runtime_error {
 public:
  Exception(ErrorCode code, const std::string& message)
      : std::runtime_error(std::string(slimcuda_error_name(static_cast<int32_t>(code))) + ": " + message),
        code_(code),
        message_(message) {}
  /// The code, for branching: catch (const slimcuda::Exception& e) { if (e.code() == ...) }.
  [[nodiscard]] ErrorCode code() const noexcept { return code_; }
  /// The code's name ("InvalidArgument").
  [[nodiscard]] const char* name() const noexcept { return slimcuda_error_name(static_cast<int32_t>(code_)); }
  /// The library's message alone, without the name.
  [[nodiscard]] const std::string& message() const noexcept { return message_; }

 private:
  ErrorCode code_;
  std::string message_;
};

namespace detail {
/// Throws for a failed C call, with this thread's message for it (read at once: the next
/// slimcuda call replaces it).
inline void check(int32_t code) {
  if (code != SLIMCUDA_OK) throw Exception(static_cast<ErrorCode>(code), slimcuda_last_error_message());
}
}  // namespace detail

/// The library's version ("0.3.0"); SLIMCUDA_VERSION_STRING is the headers'.
inline std::string version() { return slimcuda_version(); }

/// Usable CUDA devices: 0, not an error, without a GPU or driver.
inline int32_t device_count() {
  int32_t n = 0;
  detail::check(slimcuda_device_count(&n));
  return n;
}

// ---- Element types and devices -------------------------------------------------------------

/// Tensor element types: c10's codes.
enum class DType : int32_t {
  Uint8 = SLIMCUDA_UINT8,
  Int8 = SLIMCUDA_INT8,
  Int16 = SLIMCUDA_INT16,
  Int32 = SLIMCUDA_INT32,
  Int64 = SLIMCUDA_INT64,
  Float16 = SLIMCUDA_FLOAT16,
  Float32 = SLIMCUDA_FLOAT32,
  Float64 = SLIMCUDA_FLOAT64,
  Bool = SLIMCUDA_BOOL,
  BFloat16 = SLIMCUDA_BFLOAT16,
  Unknown = SLIMCUDA_SPEC_UNKNOWN,  ///< a TensorSpec's dtype when the model file does not state it
};

/// PyTorch's name of a dtype ("float32"; "unknown" for Unknown or another code).
inline const char* dtype_name(DType d) noexcept {
  switch (d) {
    case DType::Uint8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::Float16:
      return "float16";
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Bool:
      return "bool";
    case DType::BFloat16:
      return "bfloat16";
    default:
      return "unknown";
  }
}

/// The raw bits of a float16 or bfloat16 element: C++17 has no such types, and a uint16_t
/// would be taken for an integer.
struct Float16 {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};
static_assert(sizeof(Float16) == 2 && std::is_trivially_copyable_v<Float16>, "host elements are copied as bytes");
static_assert(sizeof(BFloat16) == 2 && std::is_trivially_copyable_v<BFloat16>, "host elements are copied as bytes");
static_assert(sizeof(bool) == 1, "slimcuda's bool elements are one byte");

/// dtype_of<T>::value: the dtype of host elements of type T. Defined for one type per
/// dtype (uint8_t, int8_t, int16_t, int32_t, int64_t, Float16, float, double, bool,
/// BFloat16); another type does not compile.
template <class T>
struct dtype_of;
template <>
struct dtype_of<uint8_t> : std::integral_constant<DType, DType::Uint8> {};
template <>
struct dtype_of<int8_t> : std::integral_constant<DType, DType::Int8> {};
template <>
struct dtype_of<int16_t> : std::integral_constant<DType, DType::Int16> {};
template <>
struct dtype_of<int32_t> : std::integral_constant<DType, DType::Int32> {};
template <>
struct dtype_of<int64_t> : std::integral_constant<DType, DType::Int64> {};
template <>
struct dtype_of<Float16> : std::integral_constant<DType, DType::Float16> {};
template <>
struct dtype_of<float> : std::integral_constant<DType, DType::Float32> {};
template <>
struct dtype_of<double> : std::integral_constant<DType, DType::Float64> {};
template <>
struct dtype_of<bool> : std::integral_constant<DType, DType::Bool> {};
template <>
struct dtype_of<BFloat16> : std::integral_constant<DType, DType::BFloat16> {};
template <class T>
inline constexpr DType dtype_of_v = dtype_of<T>::value;

enum class DeviceType : int32_t { CPU = SLIMCUDA_DEVICE_CPU, CUDA = SLIMCUDA_DEVICE_CUDA };

/// Where memory and work live. index -1 on CUDA: the calling thread's current device.
struct Device {
  DeviceType type = DeviceType::CPU;
  int32_t index = 0;
  static constexpr Device cpu() noexcept { return {DeviceType::CPU, 0}; }
  static constexpr Device cuda(int32_t index = -1) noexcept { return {DeviceType::CUDA, index}; }
  /// There is one CPU: CPU devices are equal whatever their index (the library reports -1 or 0).
  friend constexpr bool operator==(Device a, Device b) noexcept {
    return a.type == b.type && (a.type == DeviceType::CPU || a.index == b.index);
  }
  friend constexpr bool operator!=(Device a, Device b) noexcept { return !(a == b); }
};

// ---- Streams ---------------------------------------------------------------------------------

/// A stream slimcuda does not own (yours, another library's, or a Stream's), by its handle.
/// Copyable. Made from a cudaStream_t or void*; the legacy default stream, whose handle is
/// null, is legacy_default(): a literal 0 or nullptr does not compile, so that "no stream"
/// and "the legacy default stream" cannot be confused.
class StreamView {
 public:
  constexpr explicit StreamView(void* handle) noexcept : handle_(handle) {}
  StreamView(int) = delete;             // a literal 0: use legacy_default()
  StreamView(std::nullptr_t) = delete;  // likewise
  static constexpr StreamView legacy_default() noexcept { return StreamView(static_cast<void*>(nullptr)); }
  [[nodiscard]] constexpr void* handle() const noexcept { return handle_; }

 private:
  void* handle_;
};

namespace detail {
/// Selects a stream for one call on this thread and restores the previous selection, as
/// CallerStreamGuard does, through the C ABI. Neither copyable nor movable: it is a scope.
class StreamScope {
 public:
  explicit StreamScope(std::optional<StreamView> stream) : active_(stream.has_value()) {
    if (active_) check(slimcuda_caller_stream_push(stream->handle()));
  }
  ~StreamScope() {
    if (active_) (void)slimcuda_caller_stream_pop();  // cannot fail: this scope pushed
  }
  StreamScope(const StreamScope&) = delete;  // one push, one pop
  StreamScope& operator=(const StreamScope&) = delete;
  StreamScope(StreamScope&&) = delete;
  StreamScope& operator=(StreamScope&&) = delete;

 private:
  bool active_;
};
}  // namespace detail

enum class StreamFlags : int32_t {
  Default = SLIMCUDA_STREAM_DEFAULT,          ///< synchronizes with the legacy default stream
  NonBlocking = SLIMCUDA_STREAM_NON_BLOCKING  ///< does not (what CUDA graphs need)
};

/// A CUDA stream slimcuda creates and destroys (for programs without their own CUDA
/// runtime). Move-only; a moved-from Stream owns nothing and its calls throw InvalidState.
class Stream {
 public:
  /// Creates a stream on device_index (-1: the current device). NotSupported without a GPU.
  explicit Stream(StreamFlags flags = StreamFlags::Default, int32_t device_index = -1) {
    detail::check(slimcuda_stream_create(static_cast<int32_t>(flags), device_index, &handle_));
    owned_ = true;
  }
  ~Stream() {
    if (owned_) (void)slimcuda_stream_destroy(handle_);
  }
  Stream(Stream&& other) noexcept
      : handle_(std::exchange(other.handle_, nullptr)), owned_(std::exchange(other.owned_, false)) {}
  Stream& operator=(Stream&& other) noexcept {
    if (this != &other) {
      if (owned_) (void)slimcuda_stream_destroy(handle_);
      handle_ = std::exchange(other.handle_, nullptr);
      owned_ = std::exchange(other.owned_, false);
    }
    return *this;
  }
  Stream(const Stream&) = delete;  // one owner destroys it
  Stream& operator=(const Stream&) = delete;

  /// The stream as a StreamView (throws InvalidState when moved from: a null handle would
  /// be the legacy default stream).
  [[nodiscard]] StreamView view() const {
    if (!owned_) throw Exception(ErrorCode::InvalidState, "slimcuda::Stream: moved from");
    return StreamView(handle_);
  }
  operator StreamView() const { return view(); }  // NOLINT: a Stream is usable where a view is
  /// The cudaStream_t, as void* (null when moved from).
  [[nodiscard]] void* handle() const noexcept { return handle_; }
  /// Waits for all work enqueued on the stream.
  void synchronize() const { detail::check(slimcuda_stream_synchronize(view().handle())); }
  /// The device the stream belongs to.
  [[nodiscard]] int32_t device() const {
    int32_t d = -1;
    detail::check(slimcuda_stream_device(view().handle(), &d));
    return d;
  }

 private:
  void* handle_ = nullptr;
  bool owned_ = false;
};

// ---- Tensors ---------------------------------------------------------------------------------

/// A tensor's metadata (slimcuda_tensor_info, with owned arrays).
struct TensorInfo {
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  ///< elements
  int64_t numel = 0;
  int64_t storage_offset = 0;  ///< elements
  int64_t storage_bytes = 0;
  void* data = nullptr;  ///< element 0 (device memory for CUDA tensors)
  DType dtype = DType::Unknown;
  Device device;
  bool pinned = false;
  bool contiguous = false;
};

/// An owned handle to a slim tensor (slimcuda_tensor*), the object AOTInductor models
/// receive. Move-only: view() makes another handle over the same memory.
class Tensor {
 public:
  /// Owns nothing (the moved-from state).
  Tensor() noexcept = default;
  /// Adopts a handle (from slimcuda_tensor_empty, a model run, ...): deleted with this.
  explicit Tensor(slimcuda_tensor* owned) noexcept : t_(owned) {}
  ~Tensor() { (void)slimcuda_tensor_delete(t_); }
  Tensor(Tensor&& other) noexcept : t_(std::exchange(other.t_, nullptr)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    if (this != &other) {
      (void)slimcuda_tensor_delete(t_);
      t_ = std::exchange(other.t_, nullptr);
    }
    return *this;
  }
  Tensor(const Tensor&) = delete;  // one owner per handle: view() for a second handle
  Tensor& operator=(const Tensor&) = delete;

  /// A new uninitialized tensor (strides empty: contiguous).
  static Tensor empty(const std::vector<int64_t>& sizes, DType dtype, Device device = Device::cpu(),
                      const std::vector<int64_t>& strides = {}) {
    if (!strides.empty() && strides.size() != sizes.size()) {
      throw Exception(ErrorCode::InvalidArgument, "slimcuda::Tensor::empty: " + std::to_string(strides.size()) +
                                                      " strides for " + std::to_string(sizes.size()) + " sizes");
    }
    slimcuda_tensor* t = nullptr;
    detail::check(slimcuda_tensor_empty(static_cast<int64_t>(sizes.size()), sizes.data(),
                                        strides.empty() ? nullptr : strides.data(), static_cast<int32_t>(dtype),
                                        static_cast<int32_t>(device.type), device.index, 0, &t));
    return Tensor(t);
  }

  /// A new contiguous tensor of shape on device holding a copy of n elements at data
  /// (exactly the shape's count, else InvalidArgument), of T's dtype. With a stream, the
  /// allocation and the copy run on it.
  template <class T>
  static Tensor from(const std::vector<int64_t>& shape, const T* data, size_t n, Device device = Device::cpu(),
                     std::optional<StreamView> stream = std::nullopt) {
    detail::StreamScope scope(stream);
    Tensor t = empty(shape, dtype_of_v<T>, device);
    t.copy_from(data, n);
    return t;
  }
  /// The same from a vector.
  template <class T>
  static Tensor from(const std::vector<int64_t>& shape, const std::vector<T>& data, Device device = Device::cpu(),
                     std::optional<StreamView> stream = std::nullopt) {
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no data()
      std::unique_ptr<bool[]> bytes(new bool[data.size()]);
      for (size_t i = 0; i < data.size(); ++i) bytes[i] = data[i];
      return from(shape, bytes.get(), data.size(), device, stream);
    } else {
      return from(shape, data.data(), data.size(), device, stream);
    }
  }

  [[nodiscard]] slimcuda_tensor* get() const noexcept { return t_; }
  /// Gives up ownership: the caller deletes the handle (slimcuda_tensor_delete).
  [[nodiscard]] slimcuda_tensor* release() noexcept { return std::exchange(t_, nullptr); }
  explicit operator bool() const noexcept { return t_ != nullptr; }

  [[nodiscard]] TensorInfo info() const {
    slimcuda_tensor_info i{};
    detail::check(slimcuda_tensor_get_info(t_, &i));
    TensorInfo out;
    out.sizes.assign(i.sizes, i.sizes + i.ndim);
    out.strides.assign(i.strides, i.strides + i.ndim);
    out.numel = i.numel;
    out.storage_offset = i.storage_offset;
    out.storage_bytes = i.storage_bytes;
    out.data = i.data;
    out.dtype = static_cast<DType>(i.dtype);
    out.device = Device{static_cast<DeviceType>(i.device_type), i.device_index};
    out.pinned = i.pinned != 0;
    out.contiguous = i.contiguous != 0;
    return out;
  }
  [[nodiscard]] std::vector<int64_t> sizes() const { return info().sizes; }
  [[nodiscard]] DType dtype() const { return info().dtype; }
  [[nodiscard]] Device device() const { return info().device; }
  [[nodiscard]] int64_t numel() const { return info().numel; }

  /// Fills the tensor from n contiguous host elements (its number of elements), converting
  /// T's dtype to the tensor's.
  template <class T>
  void copy_from(const T* src, size_t n, std::optional<StreamView> stream = std::nullopt) {
    detail::StreamScope scope(stream);
    detail::check(slimcuda_tensor_copy_from_host(t_, src, n * sizeof(T), static_cast<int32_t>(dtype_of_v<T>)));
  }
  /// Reads the tensor (row-major order of its view) into n host elements (its number of
  /// elements), converting its dtype to T's.
  template <class T>
  void copy_to(T* dst, size_t n, std::optional<StreamView> stream = std::nullopt) const {
    detail::StreamScope scope(stream);
    detail::check(slimcuda_tensor_copy_to_host(t_, dst, n * sizeof(T), static_cast<int32_t>(dtype_of_v<T>)));
  }
  /// A copy of the elements in a new vector. T must be the tensor's dtype (InvalidArgument
  /// otherwise: copy_to converts); a view with more elements than its storage holds (a
  /// dimension broadcast with stride 0) is refused, since the vector could be far larger
  /// than the memory behind it.
  template <class T>
  [[nodiscard]] std::vector<T> to_vector(std::optional<StreamView> stream = std::nullopt) const {
    const TensorInfo i = info();
    if (i.dtype != dtype_of_v<T>) {
      throw Exception(ErrorCode::InvalidArgument, std::string("slimcuda::Tensor::to_vector: the tensor is ") +
                                                      dtype_name(i.dtype) + ", to_vector reads " +
                                                      dtype_name(dtype_of_v<T>) + " tensors only (copy_to converts)");
    }
    if (i.numel > i.storage_bytes / static_cast<int64_t>(sizeof(T))) {
      throw Exception(ErrorCode::InvalidArgument, "slimcuda::Tensor::to_vector: the view has more elements (" +
                                                      std::to_string(i.numel) + ") than its storage of " +
                                                      std::to_string(i.storage_bytes) +
                                                      " bytes holds (a broadcast dimension?): use copy_to");
    }
    const auto n = static_cast<size_t>(i.numel);
    if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> has no data()
      std::unique_ptr<bool[]> bytes(new bool[n]);
      copy_to(bytes.get(), n, stream);
      return std::vector<bool>(bytes.get(), bytes.get() + n);
    } else {
      std::vector<T> out(n);
      copy_to(out.data(), n, stream);
      return out;
    }
  }
  /// A new handle over the same memory (it must fit inside the storage).
  [[nodiscard]] Tensor view(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides,
                            int64_t storage_offset = 0) const {
    if (strides.size() != sizes.size()) {
      throw Exception(ErrorCode::InvalidArgument, "slimcuda::Tensor::view: " + std::to_string(strides.size()) +
                                                      " strides for " + std::to_string(sizes.size()) + " sizes");
    }
    slimcuda_tensor* v = nullptr;
    detail::check(
        slimcuda_tensor_view(t_, static_cast<int64_t>(sizes.size()), sizes.data(), strides.data(), storage_offset, &v));
    return Tensor(v);
  }
  /// this <- src: equal sizes, any strides, dtypes and devices.
  void copy_from(const Tensor& src, std::optional<StreamView> stream = std::nullopt) {
    detail::StreamScope scope(stream);
    detail::check(slimcuda_tensor_copy(t_, src.get()));
  }

 private:
  slimcuda_tensor* t_ = nullptr;
};

// ---- Models ----------------------------------------------------------------------------------

enum class Dynamism : int32_t {
  Static = SLIMCUDA_STATIC,                       ///< sizes are exact
  DynamicBounded = SLIMCUDA_DYNAMIC_BOUNDED,      ///< sizes are upper bounds
  DynamicUnbounded = SLIMCUDA_DYNAMIC_UNBOUNDED,  ///< only the rank is fixed
  Unknown = SLIMCUDA_SPEC_UNKNOWN,                ///< the file states nothing but the name
};

/// One declared input or output of a model.
struct TensorSpec {
  std::string name;
  DType dtype = DType::Unknown;
  std::vector<int64_t> sizes;
  Dynamism dynamism = Dynamism::Unknown;
  Device device;  ///< index -1: the model's device
};

enum class GraphMode : int32_t { Off = SLIMCUDA_GRAPHS_OFF, On = SLIMCUDA_GRAPHS_ON, Strict = SLIMCUDA_GRAPHS_STRICT };

/// slimcuda_load_options, with defaults: the file's own device, the default instances.
struct LoadOptions {
  std::optional<Device> device;  ///< nullopt: the device the file was made for
  int32_t instances = 0;         ///< 0: the default (1 on the CPU, 4 on CUDA)
  std::string model_name;        ///< which model of a .pt2 holding several ("": the only one)
  GraphMode cuda_graphs = GraphMode::Off;
};

struct GraphStats {
  uint64_t captures = 0;
  uint64_t replays = 0;
  uint64_t fallbacks = 0;
  uint64_t graphs = 0;
};

/// A loaded model (a .pt2 or a slimcuda package). Move-only; safe to run from several
/// threads at once (each with its own inputs and stream); destroying it must not race
/// with a run.
class Model {
 public:
  /// Loads the file at path (NotFound, AccessFailed, InvalidProgram, ... as slimcuda.h says).
  explicit Model(const std::string& path, const LoadOptions& options = {}) {
    const slimcuda_load_options o = c_options(options);
    detail::check(slimcuda_model_load_file_with(path.c_str(), &o, &m_));
  }
  /// Loads a model from memory (size bytes at data, borrowed for the call).
  static Model from_memory(const void* data, size_t size, const LoadOptions& options = {}) {
    const slimcuda_load_options o = c_options(options);
    slimcuda_model* m = nullptr;
    detail::check(slimcuda_model_load_with(data, size, &o, &m));
    return Model(m);
  }
  ~Model() { (void)slimcuda_model_free(m_); }
  Model(Model&& other) noexcept : m_(std::exchange(other.m_, nullptr)) {}
  Model& operator=(Model&& other) noexcept {
    if (this != &other) {
      (void)slimcuda_model_free(m_);
      m_ = std::exchange(other.m_, nullptr);
    }
    return *this;
  }
  Model(const Model&) = delete;  // one owner frees it
  Model& operator=(const Model&) = delete;

  [[nodiscard]] slimcuda_model* get() const noexcept { return m_; }

  /// The device the model was loaded for, resolved at load.
  [[nodiscard]] Device device() const {
    int32_t type = 0, index = 0;
    detail::check(slimcuda_model_device(m_, &type, &index));
    return Device{static_cast<DeviceType>(type), index};
  }
  /// How many runs may be in flight at once.
  [[nodiscard]] int32_t instances() const {
    int32_t n = 0;
    detail::check(slimcuda_model_instances(m_, &n));
    return n;
  }
  [[nodiscard]] std::vector<TensorSpec> inputs() const { return specs(true); }
  [[nodiscard]] std::vector<TensorSpec> outputs() const { return specs(false); }

  /// Runs the model; returns its outputs as new tensors. Inputs are checked against the
  /// specs (InvalidArgument). A CUDA model runs on the stream given, else on the thread's
  /// caller stream, returning once the work is enqueued (read the outputs on that stream);
  /// with neither, on the model's own stream, waiting for it.
  std::vector<Tensor> run(const std::vector<const Tensor*>& inputs,
                          std::optional<StreamView> stream = std::nullopt) const {
    std::vector<slimcuda_tensor*> in;
    in.reserve(inputs.size());
    for (const Tensor* t : inputs) in.push_back(t == nullptr ? nullptr : t->get());
    size_t num_inputs = 0, num_outputs = 0;
    detail::check(slimcuda_model_num_io(m_, &num_inputs, &num_outputs));
    std::vector<slimcuda_tensor*> out(num_outputs, nullptr);
    std::vector<Tensor> result;
    result.reserve(out.size());  // before the run: adopting the outputs then cannot throw
    if (stream) {
      detail::check(slimcuda_model_run_on(m_, in.data(), in.size(), out.data(), out.size(), stream->handle()));
    } else {
      detail::check(slimcuda_model_run(m_, in.data(), in.size(), out.data(), out.size()));
    }
    for (slimcuda_tensor* t : out) result.emplace_back(t);
    return result;
  }
  /// The same for model.run({&x, &z}): a braced list of pointers would otherwise also
  /// match the vector-of-tensors overload (as an iterator range).
  std::vector<Tensor> run(std::initializer_list<const Tensor*> inputs,
                          std::optional<StreamView> stream = std::nullopt) const {
    return run(std::vector<const Tensor*>(inputs), stream);
  }
  /// The same with the inputs in a vector of tensors.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, std::optional<StreamView> stream = std::nullopt) const {
    std::vector<const Tensor*> ptrs;
    ptrs.reserve(inputs.size());
    for (const Tensor& t : inputs) ptrs.push_back(&t);
    return run(ptrs, stream);
  }

  /// The model's CUDA graph counters (all 0 with graphs off, and for CPU models).
  [[nodiscard]] GraphStats graph_stats() const {
    slimcuda_graph_stats s{};
    detail::check(slimcuda_model_graph_stats(m_, &s));
    return GraphStats{s.captures, s.replays, s.fallbacks, s.graphs};
  }

 private:
  explicit Model(slimcuda_model* m) noexcept : m_(m) {}

  static slimcuda_load_options c_options(const LoadOptions& o) noexcept {
    slimcuda_load_options c{};
    c.struct_size = static_cast<int32_t>(sizeof(c));
    c.device_type = o.device ? static_cast<int32_t>(o.device->type) : -1;
    c.device_index = o.device ? o.device->index : -1;
    c.instances = o.instances;
    c.model_name = o.model_name.empty() ? nullptr : o.model_name.c_str();
    c.cuda_graphs = static_cast<int32_t>(o.cuda_graphs);
    return c;
  }

  std::vector<TensorSpec> specs(bool inputs) const {
    size_t num_inputs = 0, num_outputs = 0;
    detail::check(slimcuda_model_num_io(m_, &num_inputs, &num_outputs));
    std::vector<TensorSpec> out;
    for (size_t i = 0; i < (inputs ? num_inputs : num_outputs); ++i) {
      slimcuda_tensor_spec s{};
      detail::check(inputs ? slimcuda_model_input_spec(m_, i, &s) : slimcuda_model_output_spec(m_, i, &s));
      TensorSpec spec;
      spec.name = s.name == nullptr ? "" : s.name;
      spec.dtype = static_cast<DType>(s.dtype);
      if (s.sizes != nullptr) spec.sizes.assign(s.sizes, s.sizes + s.ndim);
      spec.dynamism = static_cast<Dynamism>(s.dynamism);
      spec.device = Device{static_cast<DeviceType>(s.device_type), s.device_index};
      out.push_back(std::move(spec));
    }
    return out;
  }

  slimcuda_model* m_ = nullptr;
};

}  // namespace cxx_v0
}  // namespace slimcuda
