// SPDX-License-Identifier: Apache-2.0
/* shim_consumer LIB [PREFIX] — a C program that knows only PyTorch's aoti_torch_* shim
 * signatures (declared below, as in torch/csrc/inductor/aoti_torch/c/shim.h), dlopen's an
 * installed libslimcuda.so and finds the shims as PREFIX##aoti_torch_*. It creates,
 * inspects, reinterprets, copies, clones and deletes CPU tensors, checks every bad input
 * of its table fails with a non-zero code, and with a prefix checks that no plain
 * aoti_torch_* symbol is there. Exit 0 = all checks passed. */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef int32_t AOTITorchError;
typedef struct AtenTensorOpaque* AtenTensorHandle;

static AOTITorchError (*empty_strided)(int64_t, const int64_t*, const int64_t*, int32_t, int32_t, int32_t,
                                       AtenTensorHandle*);
static AOTITorchError (*from_blob)(void*, int64_t, const int64_t*, const int64_t*, int64_t, int32_t, int32_t, int32_t,
                                   AtenTensorHandle*);
static AOTITorchError (*delete_tensor)(AtenTensorHandle);
static AOTITorchError (*get_data_ptr)(AtenTensorHandle, void**);
static AOTITorchError (*get_sizes)(AtenTensorHandle, int64_t**);
static AOTITorchError (*get_strides)(AtenTensorHandle, int64_t**);
static AOTITorchError (*get_dim)(AtenTensorHandle, int64_t*);
static AOTITorchError (*get_numel)(AtenTensorHandle, int64_t*);
static AOTITorchError (*get_dtype)(AtenTensorHandle, int32_t*);
static AOTITorchError (*get_device_type)(AtenTensorHandle, int32_t*);
static AOTITorchError (*is_contiguous)(AtenTensorHandle, bool*);
static AOTITorchError (*reinterpret)(AtenTensorHandle, int64_t, const int64_t*, const int64_t*, int64_t,
                                     AtenTensorHandle*);
static AOTITorchError (*copy_)(AtenTensorHandle, AtenTensorHandle, int32_t);
static AOTITorchError (*clone)(AtenTensorHandle, AtenTensorHandle*);
static int32_t (*dtype_float32)(void);
static int32_t (*device_type_cpu)(void);

static int failures = 0;
#define CHECK(cond)                                                 \
  do {                                                              \
    if (!(cond)) {                                                  \
      fprintf(stderr, "shim_consumer.c:%d: %s\n", __LINE__, #cond); \
      failures++;                                                   \
    }                                                               \
  } while (0)

static void* lib;
static const char* prefix;

static void* find(const char* name) {
  char full[256];
  snprintf(full, sizeof full, "%s%s", prefix, name);
  void* p = dlsym(lib, full);
  if (p == NULL) {
    fprintf(stderr, "shim_consumer: %s not exported\n", full);
    failures++;
  }
  return p;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: shim_consumer LIB [PREFIX]\n");
    return 2;
  }
  prefix = argc > 2 ? argv[2] : "";
  lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  if (prefix[0] != '\0') CHECK(dlsym(lib, "aoti_torch_empty_strided") == NULL); /* only prefixed names */
  *(void**)&empty_strided = find("aoti_torch_empty_strided");
  *(void**)&from_blob = find("aoti_torch_create_tensor_from_blob");
  *(void**)&delete_tensor = find("aoti_torch_delete_tensor_object");
  *(void**)&get_data_ptr = find("aoti_torch_get_data_ptr");
  *(void**)&get_sizes = find("aoti_torch_get_sizes");
  *(void**)&get_strides = find("aoti_torch_get_strides");
  *(void**)&get_dim = find("aoti_torch_get_dim");
  *(void**)&get_numel = find("aoti_torch_get_numel");
  *(void**)&get_dtype = find("aoti_torch_get_dtype");
  *(void**)&get_device_type = find("aoti_torch_get_device_type");
  *(void**)&is_contiguous = find("aoti_torch_is_contiguous");
  *(void**)&reinterpret = find("aoti_torch__reinterpret_tensor");
  *(void**)&copy_ = find("aoti_torch_copy_");
  *(void**)&clone = find("aoti_torch_clone");
  *(void**)&dtype_float32 = find("aoti_torch_dtype_float32");
  *(void**)&device_type_cpu = find("aoti_torch_device_type_cpu");
  if (failures) return 1;

  const int32_t f32 = dtype_float32(), cpu = device_type_cpu();
  CHECK(f32 == 6 && cpu == 0);

  /* create and inspect */
  int64_t sizes[2] = {2, 3};
  AtenTensorHandle a = NULL;
  CHECK(empty_strided(2, sizes, NULL, f32, cpu, 0, &a) == 0 && a != NULL);
  float* data = NULL;
  CHECK(get_data_ptr(a, (void**)&data) == 0 && data != NULL);
  for (int i = 0; i < 6; ++i) data[i] = (float)i;
  int64_t *got_sizes = NULL, *got_strides = NULL, dim = 0, numel = 0;
  int32_t dtype = -1, device_type = -1;
  bool contiguous = false;
  CHECK(get_dim(a, &dim) == 0 && dim == 2);
  CHECK(get_numel(a, &numel) == 0 && numel == 6);
  CHECK(get_sizes(a, &got_sizes) == 0 && got_sizes[0] == 2 && got_sizes[1] == 3);
  CHECK(get_strides(a, &got_strides) == 0 && got_strides[0] == 3 && got_strides[1] == 1);
  CHECK(get_dtype(a, &dtype) == 0 && dtype == f32);
  CHECK(get_device_type(a, &device_type) == 0 && device_type == cpu);
  CHECK(is_contiguous(a, &contiguous) == 0 && contiguous);

  /* reinterpret as the transpose, copy into a contiguous tensor, clone it */
  int64_t tsizes[2] = {3, 2}, tstrides[2] = {1, 3};
  AtenTensorHandle t = NULL, b = NULL, c = NULL;
  CHECK(reinterpret(a, 2, tsizes, tstrides, 0, &t) == 0);
  CHECK(is_contiguous(t, &contiguous) == 0 && !contiguous);
  CHECK(empty_strided(2, tsizes, NULL, f32, cpu, 0, &b) == 0);
  CHECK(copy_(b, t, 0) == 0);
  float* bd = NULL;
  CHECK(get_data_ptr(b, (void**)&bd) == 0);
  const float want[6] = {0, 3, 1, 4, 2, 5};
  CHECK(bd != NULL && memcmp(bd, want, sizeof want) == 0);
  CHECK(clone(t, &c) == 0);
  float* cd = NULL;
  CHECK(get_data_ptr(c, (void**)&cd) == 0 && cd != NULL && memcmp(cd, want, sizeof want) == 0);

  /* a tensor over our own memory */
  float mine[4] = {9, 8, 7, 6};
  int64_t four = 4;
  AtenTensorHandle m = NULL;
  void* md = NULL;
  CHECK(from_blob(mine, 1, &four, NULL, 0, f32, cpu, 0, &m) == 0);
  CHECK(get_data_ptr(m, &md) == 0 && md == (void*)mine);

  /* the bad-input table: every call fails, none crashes */
  AtenTensorHandle x = NULL;
  int64_t neg[2] = {2, -1}, huge[2] = {4611686018427387904LL, 4}, negstride[1] = {-1}, two = 2;
  int64_t many[26];
  for (int i = 0; i < 26; ++i) many[i] = 1;
  CHECK(empty_strided(-1, sizes, NULL, f32, cpu, 0, &x) != 0);    /* ndim < 0 */
  CHECK(empty_strided(2, NULL, NULL, f32, cpu, 0, &x) != 0);      /* null sizes, ndim > 0 */
  CHECK(empty_strided(2, neg, NULL, f32, cpu, 0, &x) != 0);       /* negative size */
  CHECK(empty_strided(1, &two, negstride, f32, cpu, 0, &x) != 0); /* negative stride */
  CHECK(empty_strided(2, huge, NULL, f32, cpu, 0, &x) != 0);      /* size overflow */
  CHECK(empty_strided(26, many, NULL, f32, cpu, 0, &x) != 0);     /* too many dims */
  CHECK(empty_strided(2, sizes, NULL, 99, cpu, 0, &x) != 0);      /* unknown dtype */
  CHECK(empty_strided(2, sizes, NULL, f32, 5, 0, &x) != 0);       /* unknown device type */
  CHECK(empty_strided(2, sizes, NULL, f32, cpu, 3, &x) != 0);     /* device index out of range */
  CHECK(empty_strided(2, sizes, NULL, f32, cpu, 0, NULL) != 0);   /* null out-pointer */
  CHECK(x == NULL);
  int64_t big[2] = {3, 3};
  CHECK(reinterpret(a, 2, big, NULL, 0, &x) != 0);         /* beyond the storage */
  CHECK(reinterpret(a, 2, tsizes, tstrides, -1, &x) != 0); /* negative offset */
  CHECK(copy_(a, t, 0) != 0);                              /* mismatched shapes */
  CHECK(copy_(NULL, t, 0) != 0);                           /* null tensor */
  CHECK(delete_tensor(NULL) != 0);

  CHECK(delete_tensor(m) == 0 && delete_tensor(c) == 0 && delete_tensor(b) == 0);
  CHECK(delete_tensor(t) == 0 && delete_tensor(a) == 0);
  printf("shim_consumer: %s (prefix '%s')\n", failures ? "FAILED" : "ok", prefix);
  return failures ? 1 : 0;
}
