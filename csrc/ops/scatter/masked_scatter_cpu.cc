// SPDX-License-Identifier: Apache-2.0
#include <cstring>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/scatter/scatter_cpu.h"
#include "csrc/tensor/copy.h"

namespace slimcuda::ops {

Error masked_scatter_cpu(const MaskedScatterProblem& p, SlimTensor& out) {
  const MaskedScatterLayout& l = p.layout;
  const auto* mask = static_cast<const uint8_t*>(p.mask->data_ptr());
  int64_t ones = 0;
  for (int64_t j = 0; j < l.numel; ++j) ones += mask[strided_offset(l.rank, l.sizes, l.mask_strides, j)] != 0;
  SLIMCUDA_OP_CHECK(ones <= l.source_numel, Error::InvalidArgument,
                    "masked_scatter: Number of elements of source < number of ones in mask (%lld < %lld)",
                    static_cast<long long>(l.source_numel), static_cast<long long>(ones));
  // self broadcast to the result's shape (stride 0 where it is broadcast), copied in.
  const SlimTensor self(p.self->storage(), p.out_sizes, p.self_strides, p.dtype, p.self->storage_offset());
  SLIMCUDA_OP_TRY(copy_tensor(out, self, StreamContext::unselected(-1)));
  const int64_t es = static_cast<int64_t>(out.element_size());
  char* to = static_cast<char*>(out.data_ptr());
  const char* source = static_cast<const char*>(p.source->data_ptr());
  int64_t k = 0;
  for (int64_t j = 0; j < l.numel; ++j) {
    if (mask[strided_offset(l.rank, l.sizes, l.mask_strides, j)] == 0) continue;
    const int64_t at = strided_offset(l.source_rank, l.source_sizes, l.source_strides, k++);
    std::memcpy(to + j * es, source + at * es, static_cast<size_t>(es));
  }
  return Error::Ok;
}

}  // namespace slimcuda::ops
