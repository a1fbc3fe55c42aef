// SPDX-License-Identifier: Apache-2.0
// wrappers.h: the cgo side of package slimcuda (included by its Go files).
#ifndef SLIMCUDA_GO_WRAPPERS_H_
#define SLIMCUDA_GO_WRAPPERS_H_

#include <stdlib.h>
#include <string.h>

#include "slimcuda/slimcuda.h"

// Each wrapper returns the code, this thread's error message on failure (malloc'ed; Go
// frees it) and the call's outputs by value. Reading the message inside the same C call
// matters: the next cgo call may run on another OS thread, with another message.
typedef struct {
  int32_t code;
  char* msg;
  void* ptr;
  int64_t i64;
  int32_t device; /* a device index resolved in the call (see sc_resolve_current) */
  int32_t i32;    /* a second integer result: never smuggled through ptr, which Go's GC checks */
} sc_result;

static inline sc_result sc_wrap(int32_t code) {
  sc_result r = {code, NULL, NULL, 0, -1, 0};
  if (code != 0) r.msg = strdup(slimcuda_last_error_message());
  return r;
}

// Sets r->device to `device`, or for -1 to this thread's current device (slimcuda.h: -1 is
// "the current device" of the calling thread). Called inside the C call that used -1, on
// the same OS thread, so the answer is the device that call used; a later cgo call may run
// on another thread with another current device.
static inline int32_t sc_resolve_current(int32_t device, sc_result* r) {
  if (device != -1) {
    r->device = device;
    return 0;
  }
  int32_t d = -1;
  int32_t code = slimcuda_stream_device(NULL, &d); /* NULL: the current device */
  if (code == 0) r->device = d;
  return code;
}

static inline sc_result sc_device_count(void) {
  int32_t n = 0;
  sc_result r = sc_wrap(slimcuda_device_count(&n));
  r.i64 = n;
  return r;
}

static inline sc_result sc_cuda_versions(void) {
  int32_t runtime = 0, driver = 0;
  sc_result r = sc_wrap(slimcuda_cuda_versions(&runtime, &driver));
  r.i64 = ((int64_t)runtime << 32) | (uint32_t)driver;
  return r;
}

// name must hold name_capacity bytes of C memory.
static inline sc_result sc_device_properties(int32_t device, char* name, size_t name_capacity) {
  uint64_t mem = 0;
  int32_t major = 0, minor = 0;
  sc_result r = sc_wrap(slimcuda_device_properties(device, name, name_capacity, &mem, &major, &minor));
  if (r.code == 0) {
    int32_t code = sc_resolve_current(device, &r);
    if (code != 0) return sc_wrap(code);
  }
  r.i64 = (int64_t)mem;
  r.i32 = major * 10 + minor;
  return r;
}

static inline sc_result sc_caller_stream_push(void* s) { return sc_wrap(slimcuda_caller_stream_push(s)); }
static inline sc_result sc_caller_stream_pop(void) { return sc_wrap(slimcuda_caller_stream_pop()); }
static inline sc_result sc_caller_stream_get(void) {
  int32_t set = 0;
  void* s = NULL;
  sc_result r = sc_wrap(slimcuda_caller_stream_get(&s, &set));
  r.ptr = s;
  r.i64 = set;
  return r;
}

// r.device: the device the new stream belongs to (read from the stream).
static inline sc_result sc_stream_create(int32_t flags, int32_t device) {
  void* s = NULL;
  sc_result r = sc_wrap(slimcuda_stream_create(flags, device, &s));
  if (r.code != 0) return r;
  int32_t d = -1;
  int32_t code = slimcuda_stream_device(s, &d);
  if (code != 0) {
    sc_result failed = sc_wrap(code);
    slimcuda_stream_destroy(s);
    return failed;
  }
  r.ptr = s;
  r.device = d;
  return r;
}
static inline sc_result sc_stream_destroy(void* s) { return sc_wrap(slimcuda_stream_destroy(s)); }
static inline sc_result sc_stream_release(void* s) { return sc_wrap(slimcuda_stream_release(s)); }
static inline sc_result sc_stream_synchronize(void* s) { return sc_wrap(slimcuda_stream_synchronize(s)); }
static inline sc_result sc_stream_device(void* s) {
  int32_t d = -1;
  sc_result r = sc_wrap(slimcuda_stream_device(s, &d));
  r.i64 = d;
  return r;
}

// r.device: the device the memory is on (-1 resolved to the current device).
static inline sc_result sc_device_alloc(size_t n, int32_t device, size_t alignment) {
  void* p = NULL;
  sc_result r = sc_wrap(slimcuda_device_alloc(n, device, alignment, &p));
  if (r.code != 0) return r;
  int32_t code = sc_resolve_current(device, &r);
  if (code != 0) {
    sc_result failed = sc_wrap(code);
    slimcuda_device_free(p, device);
    return failed;
  }
  r.ptr = p;
  return r;
}
static inline sc_result sc_device_free(void* p, int32_t device) { return sc_wrap(slimcuda_device_free(p, device)); }

static inline sc_result sc_tensor_empty(int64_t ndim, const int64_t* sizes, const int64_t* strides, int32_t dtype,
                                        int32_t device_type, int32_t device_index, int32_t pinned) {
  slimcuda_tensor* t = NULL;
  sc_result r = sc_wrap(slimcuda_tensor_empty(ndim, sizes, strides, dtype, device_type, device_index, pinned, &t));
  r.ptr = t;
  return r;
}
// A new contiguous tensor holding a copy of nbytes of host elements of `dtype`: allocated
// and filled in one C call, so with_stream selects `stream` for both on this OS thread
// (the allocation belongs to the stream the copy runs on). On failure nothing is left.
static inline sc_result sc_tensor_new_from_host(int64_t ndim, const int64_t* sizes, int32_t dtype, int32_t device_type,
                                                int32_t device_index, const void* data, size_t nbytes, int with_stream,
                                                void* stream) {
  if (with_stream) {
    int32_t code = slimcuda_caller_stream_push(stream);
    if (code != 0) return sc_wrap(code);
  }
  slimcuda_tensor* t = NULL;
  int32_t code = slimcuda_tensor_empty(ndim, sizes, NULL, dtype, device_type, device_index, 0, &t);
  if (code == 0) code = slimcuda_tensor_copy_from_host(t, data, nbytes, dtype);
  sc_result r = sc_wrap(code);  // the message before the delete and the pop
  if (code == 0) {
    r.ptr = t;
  } else {
    (void)slimcuda_tensor_delete(t);  // NULL when the allocation failed: a no-op
  }
  if (with_stream) (void)slimcuda_caller_stream_pop();
  return r;
}
static inline sc_result sc_tensor_view(void* t, int64_t ndim, const int64_t* sizes, const int64_t* strides,
                                       int64_t offset) {
  slimcuda_tensor* v = NULL;
  sc_result r = sc_wrap(slimcuda_tensor_view((const slimcuda_tensor*)t, ndim, sizes, strides, offset, &v));
  r.ptr = v;
  return r;
}
static inline sc_result sc_tensor_clone(void* t, int32_t preserve_strides) {
  slimcuda_tensor* c = NULL;
  sc_result r = sc_wrap(slimcuda_tensor_clone((const slimcuda_tensor*)t, preserve_strides, &c));
  r.ptr = c;
  return r;
}
static inline sc_result sc_tensor_delete(void* t) { return sc_wrap(slimcuda_tensor_delete((slimcuda_tensor*)t)); }
// info->sizes/strides are copied into the caller's arrays of kMaxDims (25) entries.
static inline sc_result sc_tensor_get_info(void* t, slimcuda_tensor_info* info, int64_t* sizes, int64_t* strides) {
  sc_result r = sc_wrap(slimcuda_tensor_get_info((const slimcuda_tensor*)t, info));
  if (r.code == 0) {
    for (int64_t i = 0; i < info->ndim && i < 25; ++i) {
      sizes[i] = info->sizes[i];
      strides[i] = info->strides[i];
    }
  }
  return r;
}
static inline sc_result sc_tensor_copy(void* dst, void* src, int with_stream, void* stream) {
  return sc_wrap(with_stream ? slimcuda_tensor_copy_on((slimcuda_tensor*)dst, (const slimcuda_tensor*)src, stream)
                             : slimcuda_tensor_copy((slimcuda_tensor*)dst, (const slimcuda_tensor*)src));
}
static inline sc_result sc_tensor_from_host(void* dst, const void* data, size_t n, int32_t dtype, int with_stream,
                                            void* stream) {
  return sc_wrap(with_stream ? slimcuda_tensor_copy_from_host_on((slimcuda_tensor*)dst, data, n, dtype, stream)
                             : slimcuda_tensor_copy_from_host((slimcuda_tensor*)dst, data, n, dtype));
}
static inline sc_result sc_tensor_to_host(void* src, void* data, size_t n, int32_t dtype, int with_stream,
                                          void* stream) {
  return sc_wrap(with_stream ? slimcuda_tensor_copy_to_host_on((const slimcuda_tensor*)src, data, n, dtype, stream)
                             : slimcuda_tensor_copy_to_host((const slimcuda_tensor*)src, data, n, dtype));
}

static inline sc_result sc_package_check(const void* data, size_t n) {
  return sc_wrap(slimcuda_package_check(data, n));
}
static inline sc_result sc_package_pack(const char* manifest, const char* out) {
  return sc_wrap(slimcuda_package_pack(manifest, out));
}
// The options struct is filled in Go (C.slimcuda_load_options): one place names its fields.
static inline sc_result sc_model_load_with(const void* data, size_t n, const slimcuda_load_options* o) {
  slimcuda_model* m = NULL;
  sc_result r = sc_wrap(slimcuda_model_load_with(data, n, o, &m));
  r.ptr = m;
  return r;
}
static inline sc_result sc_model_load_file_with(const char* path, const slimcuda_load_options* o) {
  slimcuda_model* m = NULL;
  sc_result r = sc_wrap(slimcuda_model_load_file_with(path, o, &m));
  r.ptr = m;
  return r;
}
static inline sc_result sc_model_graph_stats(void* m, slimcuda_graph_stats* out) {
  return sc_wrap(slimcuda_model_graph_stats((const slimcuda_model*)m, out));
}
static inline sc_result sc_model_instances(void* m) {
  int32_t n = 0;
  sc_result r = sc_wrap(slimcuda_model_instances((const slimcuda_model*)m, &n));
  r.i64 = n;
  return r;
}
static inline sc_result sc_model_free(void* m) { return sc_wrap(slimcuda_model_free((slimcuda_model*)m)); }
// i64 = (device_type << 32) | (uint32)device_index
static inline sc_result sc_model_device(void* m) {
  int32_t type = 0, index = 0;
  sc_result r = sc_wrap(slimcuda_model_device((const slimcuda_model*)m, &type, &index));
  r.i64 = ((int64_t)type << 32) | (uint32_t)index;
  return r;
}
// i64 = (inputs << 32) | outputs
static inline sc_result sc_model_num_io(void* m) {
  size_t in = 0, out = 0;
  sc_result r = sc_wrap(slimcuda_model_num_io((const slimcuda_model*)m, &in, &out));
  r.i64 = ((int64_t)in << 32) | (uint32_t)out;
  return r;
}
static inline sc_result sc_model_spec(void* m, int output, size_t i, slimcuda_tensor_spec* spec) {
  return sc_wrap(output ? slimcuda_model_output_spec((const slimcuda_model*)m, i, spec)
                        : slimcuda_model_input_spec((const slimcuda_model*)m, i, spec));
}
static inline sc_result sc_model_run(void* m, void** inputs, size_t n_in, void** outputs, size_t n_out, int with_stream,
                                     void* stream) {
  return sc_wrap(with_stream ? slimcuda_model_run_on((slimcuda_model*)m, (slimcuda_tensor* const*)inputs, n_in,
                                                     (slimcuda_tensor**)outputs, n_out, stream)
                             : slimcuda_model_run((slimcuda_model*)m, (slimcuda_tensor* const*)inputs, n_in,
                                                  (slimcuda_tensor**)outputs, n_out));
}

// State operations (slimcuda_model_reset_state, _read_constant, _write_constant: op 0, 1,
// 2) on `stream` when with_stream: selected around the one call, on this OS thread.
static inline sc_result sc_model_state_op(void* m, int op, const char* name, void* tensor, int with_stream,
                                          void* stream) {
  if (with_stream) {
    int32_t code = slimcuda_caller_stream_push(stream);
    if (code != 0) return sc_wrap(code);
  }
  int32_t code = op == 0   ? slimcuda_model_reset_state((slimcuda_model*)m)
                 : op == 1 ? slimcuda_model_read_constant((slimcuda_model*)m, name, (slimcuda_tensor*)tensor)
                           : slimcuda_model_write_constant((slimcuda_model*)m, name, (const slimcuda_tensor*)tensor);
  sc_result r = sc_wrap(code);  // the message before the pop, which may set its own
  if (with_stream) (void)slimcuda_caller_stream_pop();
  return r;
}
// Weight swaps: stage (op 0: tensors, op 1: a .pt2 file), swap (2), free the inactive set (3),
// on `stream` when with_stream.
static inline sc_result sc_model_weights_op(void* m, int op, const char* const* names, void** tensors, size_t n,
                                            const char* path, int with_stream, void* stream) {
  if (with_stream) {
    int32_t code = slimcuda_caller_stream_push(stream);
    if (code != 0) return sc_wrap(code);
  }
  int32_t code =
      op == 0   ? slimcuda_model_stage_weights((slimcuda_model*)m, names, (const slimcuda_tensor* const*)tensors, n)
      : op == 1 ? slimcuda_model_stage_weights_file((slimcuda_model*)m, path)
      : op == 2 ? slimcuda_model_swap_weights((slimcuda_model*)m)
                : slimcuda_model_free_inactive_weights((slimcuda_model*)m);
  sc_result r = sc_wrap(code);
  if (with_stream) (void)slimcuda_caller_stream_pop();
  return r;
}
static inline sc_result sc_model_num_constants(void* m) {
  size_t n = 0;
  sc_result r = sc_wrap(slimcuda_model_num_constants((const slimcuda_model*)m, &n));
  r.i64 = (int64_t)n;
  return r;
}
static inline sc_result sc_model_constant(void* m, size_t i, slimcuda_constant_info* out) {
  return sc_wrap(slimcuda_model_constant((const slimcuda_model*)m, i, out));
}

static inline sc_result sc_memory_stats(int32_t device, slimcuda_memory_stats* out) {
  return sc_wrap(slimcuda_memory_stats_get(device, out));
}
static inline sc_result sc_empty_cache(int32_t device) { return sc_wrap(slimcuda_empty_cache(device)); }
static inline sc_result sc_pinned_memory_stats(slimcuda_memory_stats* out) {
  return sc_wrap(slimcuda_pinned_memory_stats_get(out));
}
static inline sc_result sc_pinned_empty_cache(void) { return sc_wrap(slimcuda_pinned_empty_cache()); }

// Copies and kernels: with_stream = 0 uses this thread's selection, 1 selects `stream`
// for the call only (the _on variants).
static inline sc_result sc_copy_h2d(void* dst, const void* src, size_t n, int32_t device, int with_stream,
                                    void* stream) {
  return sc_wrap(with_stream ? slimcuda_copy_host_to_device_on(dst, src, n, device, stream)
                             : slimcuda_copy_host_to_device(dst, src, n, device));
}
static inline sc_result sc_copy_d2h(void* dst, const void* src, size_t n, int32_t device, int with_stream,
                                    void* stream) {
  return sc_wrap(with_stream ? slimcuda_copy_device_to_host_on(dst, src, n, device, stream)
                             : slimcuda_copy_device_to_host(dst, src, n, device));
}
static inline sc_result sc_fill_f32(void* dst, size_t n, float v, int32_t device, int with_stream, void* stream) {
  return sc_wrap(with_stream ? slimcuda_fill_f32_on(dst, n, v, device, stream) : slimcuda_fill_f32(dst, n, v, device));
}
static inline sc_result sc_axpy_f32(void* y, const void* x, size_t n, float a, int32_t device, int with_stream,
                                    void* stream) {
  return sc_wrap(with_stream ? slimcuda_axpy_f32_on(y, x, n, a, device, stream)
                             : slimcuda_axpy_f32(y, x, n, a, device));
}

// The configuration (config.go). with_value 0 passes NULL: back to the environment.
static inline sc_result sc_config_set(const char* name, const char* value, int with_value) {
  return sc_wrap(slimcuda_config_set(name, with_value ? value : NULL));
}
// r.ptr: the value, malloc'ed (Go frees it); r.i64: its length. Retries with a larger
// buffer while another thread makes the value longer between the two calls.
static inline sc_result sc_config_get(const char* name) {
  size_t capacity = 64;
  for (;;) {
    char* buf = (char*)malloc(capacity);
    if (buf == NULL) {
      sc_result r = {
          SLIMCUDA_ERROR_MEMORY_ALLOCATION_FAILED, strdup("sc_config_get: out of host memory"), NULL, 0, -1, 0};
      return r;
    }
    size_t len = 0;
    sc_result r = sc_wrap(slimcuda_config_get(name, buf, capacity, &len));
    if (r.code != 0 || len < capacity) {
      if (r.code != 0) {
        free(buf);
        buf = NULL;
      }
      r.ptr = buf;
      r.i64 = (int64_t)len;
      return r;
    }
    free(buf);
    capacity = len + 1;
  }
}

// The log (log.go): goSlimcudaLog is exported by log.go; the callback the library calls has
// a const message, which Go's export cannot declare.
extern void goSlimcudaLog(int32_t level, char* message, void* user);
static inline void sc_log_to_go(int32_t level, const char* message, void* user) {
  goSlimcudaLog(level, (char*)message, user);
}
static inline sc_result sc_set_go_logger(int on) {
  return sc_wrap(slimcuda_set_log_callback(on ? sc_log_to_go : NULL, NULL));
}

#endif  // SLIMCUDA_GO_WRAPPERS_H_
