// SPDX-License-Identifier: Apache-2.0
/* slimcuda.h — the C ABI of libslimcuda.so (everything except the aoti_torch_* shims).
 *
 * Pure C (cgo compiles it as C). Every function returns an slimcuda error code as int32_t
 * (SLIMCUDA_OK = 0) unless noted; outputs come back through trailing pointers. No function
 * aborts or throws on bad input. After a failed call, slimcuda_last_error_message() holds
 * this thread's description of it; successful calls leave that text alone (like errno).
 *
 * Streams are CUDA runtime streams (cudaStream_t) passed as void*. NULL names the legacy
 * default stream, which is a real stream, never "no stream".
 *
 * Release verbs, one rule:
 *   _free     releases memory or an object made by the matching _alloc or _load
 *             (slimcuda_device_free, slimcuda_model_free);
 *   _delete   deletes a handle made by _empty, _view or _clone, or handed out as an output;
 *             views share storage, which goes with the last handle (slimcuda_tensor_delete);
 *   _destroy  destroys a CUDA object slimcuda created (slimcuda_stream_destroy);
 *   _release  drops slimcuda's own references to an object it does not own, leaving the
 *             object alone (slimcuda_stream_release).
 * Each accepts NULL as a no-op, except where NULL names a real object: the stream verbs,
 * for which NULL is the legacy default stream, reject it (INVALID_ARGUMENT).
 */
#ifndef SLIMCUDA_SLIMCUDA_H_
#define SLIMCUDA_SLIMCUDA_H_

#include <stddef.h>
#include <stdint.h>

#include "slimcuda/export.h"
#include "slimcuda/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Error codes: ABI-stable, grouped 0x0* system, 0x1* logic, 0x2* resource. */
enum {
  SLIMCUDA_OK = 0,
  SLIMCUDA_ERROR_INTERNAL = 0x01,
  SLIMCUDA_ERROR_INVALID_STATE = 0x02,
  SLIMCUDA_ERROR_NOT_SUPPORTED = 0x10,
  SLIMCUDA_ERROR_NOT_IMPLEMENTED = 0x11,
  SLIMCUDA_ERROR_INVALID_ARGUMENT = 0x12,
  SLIMCUDA_ERROR_INVALID_TYPE = 0x13,
  SLIMCUDA_ERROR_NOT_FOUND = 0x20,
  SLIMCUDA_ERROR_MEMORY_ALLOCATION_FAILED = 0x21,
  SLIMCUDA_ERROR_ACCESS_FAILED = 0x22,
  SLIMCUDA_ERROR_INVALID_PROGRAM = 0x23,
  SLIMCUDA_ERROR_OUT_OF_RESOURCES = 0x25
};

/* This thread's message for its most recent failed call ("" if none). Never NULL; valid
 * until this thread's next slimcuda call. */
SLIMCUDA_API const char* slimcuda_last_error_message(void);

/* The error code's name ("InvalidArgument"); "Unknown" for codes not listed above. */
SLIMCUDA_API const char* slimcuda_error_name(int32_t code);

/* The library's version, "MAJOR.MINOR.PATCH" (semver; never NULL, static storage). The
 * SLIMCUDA_VERSION_* macros (version.h) are the version of the headers a program was
 * compiled against; a library with the same SONAME major (libslimcuda.so.<major>) is
 * compatible with them. */
SLIMCUDA_API const char* slimcuda_version(void);

/* ---- Configuration -----------------------------------------------------------------------
 * The library's settings, each named after its environment variable (docs/configuration.md
 * lists them with their types, defaults and meanings). A value is an override set here,
 * else the environment variable (read once per process, at the library's first use of any
 * setting; a bad value there is logged once and the default used), else the default.
 * Booleans are 1/true/yes/on or 0/false/no/off in any case; integers decimal digits; enum
 * words any case; "" is the default.
 *
 * Settings are read where they are used, so an override applies to the next call that uses
 * it, except those read once, at their first use, because what they choose is built then:
 * SLIMCUDA_CACHING_ALLOCATOR (memory a pool handed out must go back to that pool) and
 * SLIMCUDA_CUBLASLT_LIBRARY, SLIMCUDA_CUDNN_LIBRARY (each library is opened once per
 * process). Changing one of those after its first use fails with INVALID_STATE (setting the
 * value already in force succeeds). Thread-safe. */

/* Sets the setting `name` to `value`, or with value NULL drops the override (back to the
 * environment or the default). INVALID_ARGUMENT: NULL or unknown name, or a bad value
 * (nothing changes); INVALID_STATE: a read-once setting already used. */
SLIMCUDA_API int32_t slimcuda_config_set(const char* name, const char* value);

/* The value in force of setting `name`, in canonical form ("1"/"0", a number, a lower-case
 * word, a path; "" for a path with none): copied into buf NUL-terminated, truncated to
 * capacity - 1 bytes; *ret_len is its full length (without the NUL), so a caller can retry
 * with capacity *ret_len + 1. buf may be NULL when capacity is 0. INVALID_ARGUMENT: NULL or
 * unknown name, NULL ret_len, NULL buf with capacity > 0. */
SLIMCUDA_API int32_t slimcuda_config_get(const char* name, char* buf, size_t capacity, size_t* ret_len);

/* ---- Log ---------------------------------------------------------------------------------
 * What the library says outside a failed call's message (a bad setting in the environment,
 * a model's aoti_torch_warn, a fallback op's failure repeated as a warning) goes to one
 * process-wide sink: by default "slimcuda: <message>" lines on stderr. Messages less severe
 * than the setting SLIMCUDA_LOG_LEVEL (default warning) are dropped before the sink. */
enum { SLIMCUDA_LOG_DEBUG = 10, SLIMCUDA_LOG_INFO = 20, SLIMCUDA_LOG_WARNING = 30, SLIMCUDA_LOG_ERROR = 40 };
/* message: NUL-terminated, no trailing newline, valid during the call only. */
typedef void (*slimcuda_log_fn)(int32_t level, const char* message, void* user);
/* Sends the messages to fn(level, message, user) from now on; fn NULL restores stderr. fn
 * runs on the thread that logs, possibly on several threads at once, and must not call
 * slimcuda. Once this returns the previous callback is not running and is never called
 * again, so its user data may be freed. Always SLIMCUDA_OK. */
SLIMCUDA_API int32_t slimcuda_set_log_callback(slimcuda_log_fn fn, void* user);

/* ---- Devices ---------------------------------------------------------------------------
 * Device index -1 means "the current device" of the calling thread. */

/* Number of CUDA devices. Without a GPU or a driver: *count = 0 and SLIMCUDA_OK (the
 * reason is in slimcuda_last_error_message()). */
SLIMCUDA_API int32_t slimcuda_device_count(int32_t* count);

/* The CUDA runtime version this library runs with and the driver's (both as 1000*major +
 * 10*minor, e.g. 13000); *driver = 0 when no driver is installed. */
SLIMCUDA_API int32_t slimcuda_cuda_versions(int32_t* runtime, int32_t* driver);

/* Properties of device `device_index` (-1 = current): its name (NUL-terminated, truncated
 * to name_capacity), total memory in bytes and compute capability. Any output may be NULL. */
SLIMCUDA_API int32_t slimcuda_device_properties(int32_t device_index, char* name, size_t name_capacity,
                                                uint64_t* total_memory, int32_t* cc_major, int32_t* cc_minor);

/* ---- Caller stream ---------------------------------------------------------------------
 * One selection per OS thread, shared with the C++ CallerStreamGuard: push selects
 * `stream` (NULL = the legacy default stream, a real selection) and remembers the previous
 * selection; pop restores it (SLIMCUDA_ERROR_INVALID_STATE when this thread pushed
 * nothing). Pushes and pops must pair up LIFO on one thread. */
SLIMCUDA_API int32_t slimcuda_caller_stream_push(void* stream);
SLIMCUDA_API int32_t slimcuda_caller_stream_pop(void);
/* *is_set = 0: no selection (*stream = NULL); 1: *stream is selected (maybe NULL). */
SLIMCUDA_API int32_t slimcuda_caller_stream_get(void** stream, int32_t* is_set);

/* ---- Streams (for callers without their own CUDA runtime, such as Go) -----------------
 * Thread safety: every function here may be called from any thread, on the same stream
 * from several threads at once (CUDA streams are thread-safe). Destroying or releasing a
 * stream while another thread still enqueues on it, or passes it to slimcuda, is the
 * caller's error, as it is in CUDA. */
enum {
  SLIMCUDA_STREAM_DEFAULT = 0,     /* synchronizes with the legacy default stream */
  SLIMCUDA_STREAM_NON_BLOCKING = 1 /* does not (cudaStreamNonBlocking) */
};
/* Creates a stream on device_index (-1 = current). Free with slimcuda_stream_destroy. */
SLIMCUDA_API int32_t slimcuda_stream_create(int32_t flags, int32_t device_index, void** stream);
/* Destroys a stream from slimcuda_stream_create (NULL is rejected: it is not ours). */
SLIMCUDA_API int32_t slimcuda_stream_destroy(void* stream);
/* Call before destroying a stream slimcuda did not create (yours, another library's) on
 * which slimcuda memory was freed: waits for the stream's device, then the allocator's
 * cached blocks no longer refer to the stream (a later stream at the same address must not
 * inherit them) and serve any stream at once. The stream itself is left alone. Forgetting
 * it is safe from crashes: slimcuda calls CUDA on a stream only inside a call given that
 * stream (its blocks then serve other streams once the allocator knows their work is
 * done). NULL: INVALID_ARGUMENT. */
SLIMCUDA_API int32_t slimcuda_stream_release(void* stream);
/* Blocks until all work enqueued on `stream` (NULL = legacy default stream) is done. */
SLIMCUDA_API int32_t slimcuda_stream_synchronize(void* stream);
/* The device a stream belongs to (NULL: the current device). */
SLIMCUDA_API int32_t slimcuda_stream_device(void* stream, int32_t* device_index);

/* ---- Device memory ----------------------------------------------------------------------
 * alignment: 0 = the allocator's natural alignment (256 bytes for CUDA), otherwise a power
 * of two (else INVALID_ARGUMENT). nbytes = 0 succeeds with *out = NULL and allocates
 * nothing. Out of memory: MEMORY_ALLOCATION_FAILED. No GPU or driver: NOT_SUPPORTED.
 * Free with slimcuda_device_free on the same device index; freeing NULL is a no-op. */
SLIMCUDA_API int32_t slimcuda_device_alloc(size_t nbytes, int32_t device_index, size_t alignment, void** out);
SLIMCUDA_API int32_t slimcuda_device_free(void* ptr, int32_t device_index);

/* Device memory is cached per GPU: freed blocks are kept and reused — at once on the
 * stream they were allocated on (the caller stream, else the legacy default stream), on
 * another stream once the work queued on theirs is done. Work on other streams that uses a
 * block must be finished before it is freed. SLIMCUDA_CACHING_ALLOCATOR=0 (the environment,
 * or slimcuda_config_set before the first allocation: read once) turns caching off. */
typedef struct {
  uint64_t allocated_bytes, peak_allocated_bytes; /* handed out, not yet freed */
  uint64_t reserved_bytes, peak_reserved_bytes;   /* held from CUDA: allocated + cached */
  uint64_t allocations, frees, cache_hits, cache_misses;
  uint64_t segments;    /* cudaMalloc'ed segments held */
  uint64_t oom_retries; /* allocations retried after emptying the cache */
} slimcuda_memory_stats;
/* The cache's statistics for device_index (-1: current); zeros before its first allocation. */
SLIMCUDA_API int32_t slimcuda_memory_stats_get(int32_t device_index, slimcuda_memory_stats* out);
/* Returns cached, unused device memory of device_index to CUDA (waits for the device first). */
SLIMCUDA_API int32_t slimcuda_empty_cache(int32_t device_index);
/* The same for the cached pinned host pool (pinned tensors; one pool for all GPUs;
 * segments are cudaHostAlloc'ed). NOT_SUPPORTED without a GPU. */
SLIMCUDA_API int32_t slimcuda_pinned_memory_stats_get(slimcuda_memory_stats* out);
SLIMCUDA_API int32_t slimcuda_pinned_empty_cache(void);

/* Blocking copies. Checks, in order: dst or src NULL -> INVALID_ARGUMENT (even for 0
 * bytes); device_index < -1 -> INVALID_ARGUMENT; no GPU/driver -> NOT_SUPPORTED; index not
 * an existing device -> INVALID_ARGUMENT; nbytes = 0 -> OK with nothing enqueued. With a
 * caller stream selected on this thread, the copy is enqueued on it (after the work already
 * there), and the call waits for exactly that copy before returning; the device is the
 * stream's own (read from the stream): index -1 means it, another index must equal it, else
 * INVALID_ARGUMENT. (A selected NULL, the legacy default stream, exists on every device:
 * -1 is then the current device.) With no selection, a
 * synchronous copy. Either way `src`/`dst` host memory may be reused once the call returns. */
SLIMCUDA_API int32_t slimcuda_copy_host_to_device(void* dst, const void* src, size_t nbytes, int32_t device_index);
SLIMCUDA_API int32_t slimcuda_copy_device_to_host(void* dst, const void* src, size_t nbytes, int32_t device_index);

/* The same copies with `stream` selected for the duration of the call only (NULL = legacy
 * default stream). For callers, like Go, whose threads change between calls. */
SLIMCUDA_API int32_t slimcuda_copy_host_to_device_on(void* dst, const void* src, size_t nbytes, int32_t device_index,
                                                     void* stream);
SLIMCUDA_API int32_t slimcuda_copy_device_to_host_on(void* dst, const void* src, size_t nbytes, int32_t device_index,
                                                     void* stream);

/* ---- Kernels ---------------------------------------------------------------------------
 * Asynchronous: enqueued on the caller stream when one is selected, else on the legacy
 * default stream; the call returns once the launch is enqueued. */

/* dst[i] = value for i < n, float32 device memory on device_index. */
SLIMCUDA_API int32_t slimcuda_fill_f32(void* dst, size_t n, float value, int32_t device_index);
/* y[i] = a * x[i] + y[i] for i < n, float32 device memory on device_index. */
SLIMCUDA_API int32_t slimcuda_axpy_f32(void* y, const void* x, size_t n, float a, int32_t device_index);

/* Same two with `stream` selected for the call only. */
SLIMCUDA_API int32_t slimcuda_fill_f32_on(void* dst, size_t n, float value, int32_t device_index, void* stream);
SLIMCUDA_API int32_t slimcuda_axpy_f32_on(void* y, const void* x, size_t n, float a, int32_t device_index,
                                          void* stream);

/* ---- Tensors --------------------------------------------------------------------------
 * The same objects the aoti_torch_* shims call AtenTensorHandle (slimcuda/aoti_torch.h),
 * under names that do not change with the shim prefix. dtype codes are c10's; device
 * types: 0 CPU, 1 CUDA.
 *
 * Thread safety: a handle may be read from several threads at once (metadata, views,
 * copies from it, use as a model input). Writing a tensor's memory (a copy into it) while
 * another thread reads or writes the same memory is a data race, as with any memory.
 * slimcuda_tensor_delete must not race with any other use of the same handle; handles that
 * share storage (views, clones of a handle) may be deleted from different threads at once
 * (the storage's reference count is atomic). */
typedef struct slimcuda_tensor slimcuda_tensor;

enum {
  SLIMCUDA_UINT8 = 0,
  SLIMCUDA_INT8 = 1,
  SLIMCUDA_INT16 = 2,
  SLIMCUDA_INT32 = 3,
  SLIMCUDA_INT64 = 4,
  SLIMCUDA_FLOAT16 = 5,
  SLIMCUDA_FLOAT32 = 6,
  SLIMCUDA_FLOAT64 = 7,
  SLIMCUDA_BOOL = 11,
  SLIMCUDA_BFLOAT16 = 15
};
enum { SLIMCUDA_DEVICE_CPU = 0, SLIMCUDA_DEVICE_CUDA = 1 };

/* A new tensor with its own memory (uninitialized). strides NULL = contiguous. pinned = 1:
 * page-locked host memory (device_type must be CPU; NOT_SUPPORTED without a CUDA driver).
 * Free with slimcuda_tensor_delete. */
SLIMCUDA_API int32_t slimcuda_tensor_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                           int32_t device_type, int32_t device_index, int32_t pinned,
                                           slimcuda_tensor** out);
/* A new view of t's storage (must fit inside it). Free with slimcuda_tensor_delete. */
SLIMCUDA_API int32_t slimcuda_tensor_view(const slimcuda_tensor* t, int64_t ndim, const int64_t* sizes,
                                          const int64_t* strides, int64_t storage_offset, slimcuda_tensor** out);
/* A new tensor with t's sizes, dtype and device holding a copy of it: contiguous, or with
 * t's strides when preserve_strides = 1 (then the storage span t's strides reach is copied
 * as is: O(span), so a [2^40] view with stride 0 copies one element). */
SLIMCUDA_API int32_t slimcuda_tensor_clone(const slimcuda_tensor* t, int32_t preserve_strides, slimcuda_tensor** out);
/* Deletes the handle; the memory goes with the last view of it. NULL is a no-op. */
SLIMCUDA_API int32_t slimcuda_tensor_delete(slimcuda_tensor* t);

typedef struct {
  int64_t ndim;
  const int64_t* sizes;   /* borrowed: valid while the tensor lives */
  const int64_t* strides; /* borrowed */
  int64_t numel;
  int64_t storage_offset; /* elements */
  int64_t storage_bytes;
  void* data; /* address of element 0 */
  int32_t dtype;
  int32_t device_type;
  int32_t device_index;
  int32_t pinned; /* page-locked host memory */
  int32_t contiguous;
} slimcuda_tensor_info;
SLIMCUDA_API int32_t slimcuda_tensor_get_info(const slimcuda_tensor* t, slimcuda_tensor_info* info);

/* dst <- src (the copy_ shim's semantics: equal sizes, any strides and dtypes, CPU/CUDA).
 * A dst whose elements alias (a dimension of size > 1 with stride 0, or more elements than
 * the storage span they reach) -> INVALID_ARGUMENT "the destination has overlapping
 * elements": the work is bounded by dst's storage. */
SLIMCUDA_API int32_t slimcuda_tensor_copy(slimcuda_tensor* dst, const slimcuda_tensor* src);
/* dst <- nbytes of contiguous host elements of `dtype`, as many as dst has (else
 * INVALID_ARGUMENT); converted to dst's dtype. Blocking: `data` is free on return. */
SLIMCUDA_API int32_t slimcuda_tensor_copy_from_host(slimcuda_tensor* dst, const void* data, size_t nbytes,
                                                    int32_t dtype);
/* The reverse: src's elements, converted to `dtype`, into contiguous host memory. */
SLIMCUDA_API int32_t slimcuda_tensor_copy_to_host(const slimcuda_tensor* src, void* data, size_t nbytes, int32_t dtype);
/* The same three with `stream` selected for the call only (NULL = legacy default stream). */
SLIMCUDA_API int32_t slimcuda_tensor_copy_on(slimcuda_tensor* dst, const slimcuda_tensor* src, void* stream);
SLIMCUDA_API int32_t slimcuda_tensor_copy_from_host_on(slimcuda_tensor* dst, const void* data, size_t nbytes,
                                                       int32_t dtype, void* stream);
SLIMCUDA_API int32_t slimcuda_tensor_copy_to_host_on(const slimcuda_tensor* src, void* data, size_t nbytes,
                                                     int32_t dtype, void* stream);

/* ---- Model packages and models -----------------------------------------------------------
 * Two kinds of model file, told apart by their first bytes (never by the name):
 *   - PyTorch's .pt2, as torch._inductor.aoti_compile_and_package writes it (a zip):
 *     read in place (mapped read-only; nothing extracted to disk), the model chosen by
 *     name (slimcuda_load_options.model_name) among its data/aotinductor/<name>/ folders,
 *     its device from its metadata (AOTI_DEVICE_KEY), its input specs from the archive
 *     (docs/pt2.md: what the archive states and what it does not); weights kept outside
 *     its library (binary_blob, pickle_weights) are uploaded from the archive before the
 *     load returns — on the caller stream selected for the load call, else on the model's
 *     own stream, ready for a run on any stream when it returns — one copy per model and
 *     device shared by every load; an export with no weights anywhere
 *     (package_constants_in_so=False alone) is INVALID_PROGRAM;
 *   - slimcuda's own package (csrc/package/package.fbs): compiled model libraries (one per
 *     device type) with the manifest of their inputs and outputs (kept for existing users:
 *     docs/pt2.md).
 * Malformed .pt2 archives are INVALID_PROGRAM with the reason: a truncated or unparsable
 * zip, an entry name that is empty, absolute or holds "..", a duplicate entry, an
 * encrypted entry or another method than stored/deflate, sizes that disagree or lie
 * outside the file, a deflate entry declaring more than deflate can expand (a zip bomb), a
 * model folder without exactly one .so or without its metadata, a library whose CRC does
 * not match or that is not an x86-64 ELF shared object; the wrapper source's input checks
 * disagreeing with the library's input count. A compressed .so is inflated, bounded by its
 * checked declared size, into memory before the memfd (PyTorch stores it); over 4 GiB
 * inflated: NOT_SUPPORTED. A model whose GPU kernels are files beside its library (*.cubin:
 * exported without aot_inductor.embed_kernel_binary) is NOT_SUPPORTED: they would have to be
 * extracted to disk. Several models and no usable name: INVALID_ARGUMENT (see model_name).
 *
 * What "untrusted input" means here. Checked before anything is loaded (INVALID_PROGRAM,
 * with the reason): the package structure (FlatBuffers verifier), every metadata field
 * (dtypes, sizes, dynamism, devices), each library's integrity (its XXH3-128 hash in the
 * package: a corruption check, not a signature), its ELF shape (64-bit x86-64 shared
 * object whose segments and dynamic table lie inside its bytes) and its linking tables
 * (relocations, symbols, hash and version tables the dynamic loader can use without going
 * out of bounds or failing an assertion). NOT checked, and not checkable in-process: the
 * library's code. Loading a model runs its ELF constructors, and
 * running it runs its code, with this process's privileges — as loading any plugin does.
 * Load only packages you would run as programs; slimcuda_package_check runs no code.
 *
 * Every load is its own object: two different packages loaded at once, one after another,
 * from many threads, or after a library that cannot be unloaded, each run their own
 * library.
 *
 * Instances and thread safety. A model holds N instances (slimcuda_load_options.instances:
 * the AOTInductor container's num_models, each with its own activations, the weights
 * shared). slimcuda_model_run and _run_on may be called from any number of threads at once
 * on one model, each with its own inputs, outputs and stream: a run takes a free instance
 * and never waits for another caller's work while one is free; when all N are busy it
 * waits for one. So are the read-only calls (_device, _instances, _num_io, _*_spec).
 * slimcuda_model_free while another thread is in, or about to enter, any call on the same
 * model is the caller's error (undefined behaviour: nothing tracks callers, and a
 * reference count could not protect a thread that reads the pointer after the free).
 * Finish every run first; Go's Model.Close does that for you. Outputs already returned
 * stay valid after the free (see slimcuda_model_load). */
typedef struct slimcuda_model slimcuda_model;
enum { SLIMCUDA_STATIC = 0, SLIMCUDA_DYNAMIC_BOUNDED = 1, SLIMCUDA_DYNAMIC_UNBOUNDED = 2 };

/* SLIMCUDA_SPEC_UNKNOWN (dynamism, dtype): the model file states nothing about this input or
 * output but its position and name (a .pt2 output, or a .pt2 input without its wrapper
 * source): ndim 0, sizes NULL; a run checks such an input's device only. */
enum { SLIMCUDA_SPEC_UNKNOWN = -1 };

typedef struct {
  const char* name; /* borrowed: valid while the model lives */
  int32_t dtype;
  int32_t dynamism; /* sizes are exact (STATIC) or upper bounds (DYNAMIC_BOUNDED; INT64_MAX:
                       no upper bound, a .pt2's dimension without one) */
  int64_t ndim;
  const int64_t* sizes; /* borrowed */
  int32_t device_type;
  int32_t device_index; /* -1: the model's device */
} slimcuda_tensor_spec;

/* Checks package bytes as the loader would, loading nothing. */
SLIMCUDA_API int32_t slimcuda_package_check(const void* data, size_t size);
/* Reading files (slimcuda_model_load_file, slimcuda_package_pack): each file is opened
 * O_RDONLY | O_NONBLOCK (a FIFO never blocks), must be a regular file, and is read only up
 * to its cap: a package, and each library or weights file a manifest names, at most
 * 2 GiB - 2 bytes (below FlatBuffers' limit); a manifest at most 16 MiB. Codes:
 *   NOT_FOUND          the path does not exist ("cannot open PATH: No such file or directory");
 *   ACCESS_FAILED      permission denied ("...: Permission denied"), or any other open or
 *                      read failure (the system's text);
 *   INVALID_ARGUMENT   not a regular file ("PATH is not a regular file (directory)", "(fifo)",
 *                      "(device)"), or over the cap ("PATH is N bytes, over the cap of M bytes");
 *   OUT_OF_RESOURCES   no file descriptor left (EMFILE, ENFILE: "Too many open files"). */

/* Writes a package from a JSON manifest (format: csrc/package/manifest.h). Files: as above
 * (the manifest, its "so" and "weights" paths). Malformed JSON, or a number that is not a
 * JSON integer within its field's range (sizes, min_sizes: int64; dim_order: 0..255;
 * device_index: -1..127) -> INVALID_ARGUMENT naming the field and tensor; metadata against
 * the package rules -> INVALID_PROGRAM. out_path is written in place (created when absent)
 * and must be a regular file: a directory, FIFO or device -> INVALID_ARGUMENT ("PATH is not
 * a regular file (fifo)"; a FIFO never blocks, nothing is truncated first); it cannot be
 * created or written -> ACCESS_FAILED with the system's text ("cannot create PATH: No such
 * file or directory", "cannot write PATH: No space left on device"). */
SLIMCUDA_API int32_t slimcuda_package_pack(const char* manifest_path, const char* out_path);

/* Loads a model from `size` bytes in memory: a package's library for device_type (-1: CUDA
 * when a GPU and a CUDA library are there, else CPU), or a .pt2's model (the one model,
 * else the one called "model": use _load_with's model_name to choose) for its own device
 * (device_type -1, or the same as its AOTI_DEVICE_KEY; another -> NOT_SUPPORTED), on
 * device_index (-1: current). The library is loaded from memory: no file is written
 * (without /proc, an unlinked temporary file). Out of file descriptors: OUT_OF_RESOURCES.
 * An output that borrows the model's memory stays valid after slimcuda_model_free (it
 * keeps the library loaded). Free with slimcuda_model_free. */
SLIMCUDA_API int32_t slimcuda_model_load(const void* data, size_t size, int32_t device_type, int32_t device_index,
                                         slimcuda_model** out);
/* slimcuda_model_load from a file: a .pt2 (recognised by its zip signature, whatever its
 * name) is mapped read-only and read in place, with no size cap and no copy of the whole
 * file; a package is read as described above slimcuda_package_pack. Opening either: the
 * codes there (NOT_FOUND, ACCESS_FAILED, INVALID_ARGUMENT, OUT_OF_RESOURCES). */
SLIMCUDA_API int32_t slimcuda_model_load_file(const char* path, int32_t device_type, int32_t device_index,
                                              slimcuda_model** out);
/* Load options, for slimcuda_model_load_with and _load_file_with. Set struct_size to
 * sizeof(slimcuda_load_options), or an older version's size (SLIMCUDA_LOAD_OPTIONS_V1_SIZE);
 * another size: INVALID_ARGUMENT (later versions add fields at the end). NULL options:
 * every default.
 *   device_type, device_index  as for slimcuda_model_load (-1, -1: the defaults)
 *   instances                  how many runs may be in flight at once: 0 = the default,
 *                              else 1..64 (INVALID_ARGUMENT otherwise). Default: 1 on the
 *                              CPU (AOTInductor's CPU kernels already use every core for
 *                              one run), 4 on CUDA (one instance serializes concurrent
 *                              callers; bench/serving_benchmark on the H200: with 8
 *                              callers 4 gave 1.6-1.8 x the runs/s of 2 on zoo models,
 *                              docs/benchmarks.md). Each instance costs one set of the
 *                              model's activations.
 *   model_name                 which model of a .pt2 to load: NULL = the only one, else
 *                              the one called "model"; several and none of that name, or
 *                              no model of that name -> INVALID_ARGUMENT listing the names.
 *                              Ignored for a package. Borrowed for the call.
 *   cuda_graphs                SLIMCUDA_GRAPHS_OFF (0, the default), _ON or _STRICT
 *                              (INVALID_ARGUMENT otherwise; ignored for CPU models). On:
 *                              a CUDA run on a non-blocking stream (a caller stream made
 *                              with cudaStreamNonBlocking, or the model's own) is captured
 *                              into a CUDA graph the first time an instance sees its input
 *                              layout (dtypes, sizes, strides) and replayed after, in one
 *                              launch on the run's stream: the inputs are copied into the
 *                              graph's own buffers, the captured kernels run, the outputs
 *                              are copied into new tensors. A layout that cannot be captured (a
 *                              synchronizing or allocating call inside the model, a
 *                              blocking stream) runs the normal way (ON) or fails with
 *                              NOT_SUPPORTED and the reason (STRICT); either way the model
 *                              stays usable. Each graph keeps one run's activations in a
 *                              pool of its own, and the capture container a second copy of
 *                              the weights inside the library, while the model lives.
 *                              docs/graphs.md has the figures.
 * model_name and cuda_graphs are new after 0.2.0: a struct_size of
 * SLIMCUDA_LOAD_OPTIONS_V1_SIZE (0.2.0's struct) reads them as NULL and OFF. */
typedef struct {
  int32_t struct_size;
  int32_t device_type;
  int32_t device_index;
  int32_t instances;
  const char* model_name;
  int32_t cuda_graphs;
} slimcuda_load_options;
/* The struct_size of 0.2.0's slimcuda_load_options (still accepted). */
#define SLIMCUDA_LOAD_OPTIONS_V1_SIZE 16
SLIMCUDA_API int32_t slimcuda_model_load_with(const void* data, size_t size, const slimcuda_load_options* options,
                                              slimcuda_model** out);
SLIMCUDA_API int32_t slimcuda_model_load_file_with(const char* path, const slimcuda_load_options* options,
                                                   slimcuda_model** out);
/* Frees a model (NULL: no-op). Not while any other call on it is in flight: see above. */
SLIMCUDA_API int32_t slimcuda_model_free(slimcuda_model* model);
enum { SLIMCUDA_GRAPHS_OFF = 0, SLIMCUDA_GRAPHS_ON = 1, SLIMCUDA_GRAPHS_STRICT = 2 };
/* CUDA graph counters of a model (all 0 with graphs off, and for CPU models). */
typedef struct {
  uint64_t captures;  /* graphs made */
  uint64_t replays;   /* runs a graph served */
  uint64_t fallbacks; /* runs that went the normal way because their layout could not be captured */
  uint64_t graphs;    /* graphs alive */
} slimcuda_graph_stats;
SLIMCUDA_API int32_t slimcuda_model_graph_stats(const slimcuda_model* model, slimcuda_graph_stats* out);
/* The model's number of instances, resolved at load (never 0). */
SLIMCUDA_API int32_t slimcuda_model_instances(const slimcuda_model* model, int32_t* instances);
SLIMCUDA_API int32_t slimcuda_model_device(const slimcuda_model* model, int32_t* device_type, int32_t* device_index);
SLIMCUDA_API int32_t slimcuda_model_num_io(const slimcuda_model* model, size_t* num_inputs, size_t* num_outputs);
SLIMCUDA_API int32_t slimcuda_model_input_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out);
SLIMCUDA_API int32_t slimcuda_model_output_spec(const slimcuda_model* model, size_t index, slimcuda_tensor_spec* out);
/* Describing a model file without loading it: no library code runs and no GPU is needed
 * (`slimcuda info` on a machine without one). options: device_type and model_name as for
 * slimcuda_model_load_file_with (NULL: the defaults; the other fields are ignored). A .pt2's
 * counts and names come from its generated wrapper source, its inputs from the wrapper's
 * input checks and its outputs from their allocations where the source states them
 * (SLIMCUDA_SPEC_UNKNOWN elsewhere); a package's from its manifest. Codes: the file errors
 * above; INVALID_PROGRAM for a malformed file (a text file is "not a .pt2 or a slimcuda
 * package"); NOT_SUPPORTED for a .pt2 without a wrapper source that states its counts (load
 * it to learn them) or compiled for another device type than options ask for. Free with
 * slimcuda_description_free (NULL: no-op). A description is immutable: any number of
 * threads may read it at once. */
typedef struct slimcuda_description slimcuda_description;
SLIMCUDA_API int32_t slimcuda_describe(const void* data, size_t size, const slimcuda_load_options* options,
                                       slimcuda_description** out);
SLIMCUDA_API int32_t slimcuda_describe_file(const char* path, const slimcuda_load_options* options,
                                            slimcuda_description** out);
SLIMCUDA_API int32_t slimcuda_description_free(slimcuda_description* description);
/* device_type: the device type a load with the same options would use; device_types: a bit
 * (1 << type) for each device type the file has a library for. */
SLIMCUDA_API int32_t slimcuda_description_device(const slimcuda_description* description, int32_t* device_type,
                                                 uint32_t* device_types);
SLIMCUDA_API int32_t slimcuda_description_num_io(const slimcuda_description* description, size_t* num_inputs,
                                                 size_t* num_outputs);
/* Specs as slimcuda_model_input_spec's; name and sizes borrowed while the description lives. */
SLIMCUDA_API int32_t slimcuda_description_input_spec(const slimcuda_description* description, size_t index,
                                                     slimcuda_tensor_spec* out);
SLIMCUDA_API int32_t slimcuda_description_output_spec(const slimcuda_description* description, size_t index,
                                                      slimcuda_tensor_spec* out);
/* Runs the model. Inputs are checked against the package's manifest, or a .pt2's input
 * specs (INVALID_ARGUMENT: dtype, shape within bounds, layout, device, CUDA data that is not
 * device memory; an input whose spec is SLIMCUDA_SPEC_UNKNOWN: its device only), before the
 * library runs; outputs[i] receive new tensors (free with slimcuda_tensor_delete), checked
 * against a package's manifest (INVALID_PROGRAM). CUDA models run on the caller stream when
 * one is selected (returning once enqueued), else on the model's own stream, waiting for
 * it. */
SLIMCUDA_API int32_t slimcuda_model_run(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                                        slimcuda_tensor** outputs, size_t num_outputs);
SLIMCUDA_API int32_t slimcuda_model_run_on(slimcuda_model* model, slimcuda_tensor* const* inputs, size_t num_inputs,
                                           slimcuda_tensor** outputs, size_t num_outputs, void* stream);

/* State (docs/state.md). A model may write some of its constants on every run — a KV cache
 * kept in registered buffers, a running counter: its state. slimcuda finds them at load (a
 * buffer is state unless the generated wrapper source proves every use a read; parameters
 * and folded constants never are) and gives every load its own copy, so two loads of one
 * file never see each other's writes while their read-only weights stay shared; normal runs
 * and CUDA-graph replays read and write that one copy. A model with state runs one call at
 * a time: slimcuda_model_instances reports 1, and a load asking for more instances fails
 * with SLIMCUDA_ERROR_INVALID_ARGUMENT — load it once per caller (conversation) instead.
 * State operations are ordered after the model's previous run and before its next, whatever
 * their streams; like runs, they are enqueued on the caller stream when one is selected,
 * else done on return. */
enum {
  SLIMCUDA_CONSTANT_UNKNOWN = 0, /* the library does not say */
  SLIMCUDA_CONSTANT_PARAMETER = 1,
  SLIMCUDA_CONSTANT_BUFFER = 2,
  SLIMCUDA_CONSTANT_TENSOR_CONSTANT = 3,
  SLIMCUDA_CONSTANT_FOLDED = 4 /* made by the container's constant folding */
};
typedef struct {
  const char* name;     /* the container's name (e.g. "blocks_0_k_cache"); borrowed */
  const char* fqn;      /* the module's name (e.g. "blocks.0.k_cache"), or ""; borrowed */
  int32_t kind;         /* SLIMCUDA_CONSTANT_* */
  int32_t dtype;        /* a slimcuda dtype code */
  int32_t is_state;     /* 1: runs may write it (one per load, reset by _reset_state) */
  int32_t visible;      /* 1: _read_constant can read it (sizes known) */
  int64_t ndim;         /* 0 and sizes NULL when not visible */
  const int64_t* sizes; /* borrowed */
  uint64_t nbytes;      /* its storage's bytes */
} slimcuda_constant_info;
/* The model's constants (0 for a library that shows none). */
SLIMCUDA_API int32_t slimcuda_model_num_constants(const slimcuda_model* model, size_t* count);
SLIMCUDA_API int32_t slimcuda_model_constant(const slimcuda_model* model, size_t index, slimcuda_constant_info* out);
/* Puts every state constant back to its value at load (OK, nothing done, for a model without
 * state; SLIMCUDA_ERROR_NOT_SUPPORTED where the library keeps its state where slimcuda cannot
 * reach it). */
SLIMCUDA_API int32_t slimcuda_model_reset_state(slimcuda_model* model);
/* dst <- the constant `name` (the container's name or the module's), any constant; sizes
 * must equal the constant's, dtypes are converted. NOT_FOUND for an unknown name,
 * NOT_SUPPORTED for a constant slimcuda cannot see. */
SLIMCUDA_API int32_t slimcuda_model_read_constant(slimcuda_model* model, const char* name, slimcuda_tensor* dst);
/* The state constant `name` <- src (same sizes). A read-only weight is INVALID_ARGUMENT: loads
 * of one model share it (swap weights for that). */
SLIMCUDA_API int32_t slimcuda_model_write_constant(slimcuda_model* model, const char* name, const slimcuda_tensor* src);

/* Weights swapped while serving, as PyTorch's container does with its inactive buffer
 * (docs/state.md): stage a new value of every read-only weight of the model — `count`
 * tensors (host or device) named by the container's names or FQNs, each of the weight's
 * dtype and sizes, or the weights a .pt2 of the same model keeps in its archive — into new
 * memory on the caller stream when one is selected (else done on return), while runs go
 * on with the active weights; then swap between runs (waits for the runs inside the model;
 * CUDA graphs are made again by the next runs; the state stays), then free the set swapped
 * out (once the GPU is done with it). A missing, repeated, unknown or state name, another
 * dtype or sizes: INVALID_ARGUMENT, the active weights untouched; a second stage before a
 * swap or free, a swap with nothing staged: INVALID_STATE; a library without the
 * container's inactive buffer: NOT_SUPPORTED. Not while another thread frees the model. */
SLIMCUDA_API int32_t slimcuda_model_stage_weights(slimcuda_model* model, const char* const* names,
                                                  const slimcuda_tensor* const* tensors, size_t count);
SLIMCUDA_API int32_t slimcuda_model_stage_weights_file(slimcuda_model* model, const char* path);
SLIMCUDA_API int32_t slimcuda_model_swap_weights(slimcuda_model* model);
SLIMCUDA_API int32_t slimcuda_model_free_inactive_weights(slimcuda_model* model);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SLIMCUDA_SLIMCUDA_H_ */
