// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/embedding/embedding_bag_cuda.h"

#include <vector>

#include "csrc/ops/common/op_args.h"
#include "csrc/ops/embedding/embedding_bag_kernel.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

BagElement element_of(ScalarType t) noexcept {
  switch (t) {
    case ScalarType::Half:
      return BagElement::Half;
    case ScalarType::BFloat16:
      return BagElement::BFloat16;
    case ScalarType::Double:
      return BagElement::Double;
    default:
      return BagElement::Float;
  }
}

Error new_cuda(ScalarType dtype, const StreamContext& ctx, const std::vector<int64_t>& sizes,
               std::unique_ptr<SlimTensor>* owner) {
  return new_tensor(dtype, DeviceType::CUDA, ctx.device(), sizes, contiguous_strides(sizes), ctx, owner);
}

}  // namespace

Error embedding_bag_cuda(const EmbeddingBagProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[4]) {
  const bool max = p.mode == BagMode::Max;
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.dtype, ctx, {p.num_bags, p.dim}, &out[0]));
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.index_dtype, ctx, {p.n}, &out[1]));
  SLIMCUDA_RETURN_IF_ERROR(new_cuda(p.index_dtype, ctx, {p.offsets_len}, &out[2]));
  SLIMCUDA_RETURN_IF_ERROR(
      new_cuda(p.index_dtype, ctx, max ? std::vector<int64_t>{p.num_bags, p.dim} : std::vector<int64_t>{0}, &out[3]));
  BagLaunch l;
  l.weight = p.weight->data_ptr();
  l.weight_stride0 = p.weight->strides()[0];
  l.weight_stride1 = p.weight->strides()[1];
  l.indices = p.indices->data_ptr();
  l.indices_stride = p.indices->strides()[0];
  l.indices_64 = p.indices->dtype() == ScalarType::Long;
  l.offsets = p.offsets->data_ptr();
  l.offsets_stride = p.offsets->strides()[0];
  l.offsets_64 = p.offsets->dtype() == ScalarType::Long;
  if (p.per_sample_weights != nullptr) {
    l.per_sample_weights = p.per_sample_weights->data_ptr();
    l.psw_stride = p.per_sample_weights->strides()[0];
  }
  l.output = out[0]->data_ptr();
  l.offset2bag = out[1]->data_ptr();
  l.bag_size = out[2]->data_ptr();
  l.max_indices = max ? out[3]->data_ptr() : nullptr;
  l.out_64 = p.index_dtype == ScalarType::Long;
  l.offset2bag_len = p.n;
  l.bag_size_len = p.offsets_len;
  l.num_weights = p.num_weights, l.dim = p.dim, l.n = p.n, l.bags = p.num_bags, l.padding_idx = p.padding_idx;
  l.mode = static_cast<int>(p.mode);
  l.type = element_of(p.dtype);
  SLIMCUDA_OP_TRY(launch_embedding_bag(l, ctx.stream()));
  return Error::Ok;
}

}  // namespace slimcuda::ops
