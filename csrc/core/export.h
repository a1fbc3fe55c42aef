// SPDX-License-Identifier: Apache-2.0
/* export.h — SLIMCUDA_API marks what libslimcuda.so exports: the C ABI (slimcuda.h), the
 * aoti_torch_* shims and the caller-stream C++ API. Everything else is compiled with
 * hidden visibility (and the linker's version script, csrc/slimcuda.lds, agrees), so
 * internals are not ABI. Pure C. */
#ifndef SLIMCUDA_EXPORT_H_
#define SLIMCUDA_EXPORT_H_

#if defined(__GNUC__)
#define SLIMCUDA_API __attribute__((visibility("default")))
#else
#define SLIMCUDA_API
#endif

#endif /* SLIMCUDA_EXPORT_H_ */
