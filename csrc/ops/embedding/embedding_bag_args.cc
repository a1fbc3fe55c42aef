// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/embedding/embedding_bag_args.h"

#include "csrc/ops/common/op_args.h"

namespace slimcuda::ops {
namespace {

bool is_index_type(ScalarType t) noexcept { return t == ScalarType::Int || t == ScalarType::Long; }

bool is_weight_type(ScalarType t) noexcept {
  return t == ScalarType::Float || t == ScalarType::Half || t == ScalarType::BFloat16 || t == ScalarType::Double;
}

Error check_device(const char* what, const SlimTensor& t, DeviceType device_type, int* device) noexcept {
  SLIMCUDA_OP_CHECK(
      t.device().type == device_type, Error::InvalidArgument, "_embedding_bag: %s is a %s tensor; expected %s", what,
      t.device().type == DeviceType::CUDA ? "CUDA" : "CPU", device_type == DeviceType::CUDA ? "CUDA" : "CPU");
  if (device_type == DeviceType::CUDA) {
    if (*device < 0) *device = t.device().index;
    SLIMCUDA_OP_CHECK(t.device().index == *device, Error::InvalidArgument,
                      "_embedding_bag: %s is on cuda:%d, the weight on cuda:%d", what, t.device().index, *device);
  }
  return Error::Ok;
}

// The checks of the indices, offsets and per_sample_weights against the weight in *p.
Error check_index_operands(DeviceType device_type, const SlimTensor* psw, EmbeddingBagProblem* p) noexcept {
  const SlimTensor& indices = *p->indices;
  const SlimTensor& offsets = *p->offsets;
  SLIMCUDA_RETURN_IF_ERROR(check_device("indices", indices, device_type, &p->device));
  SLIMCUDA_RETURN_IF_ERROR(check_device("offsets", offsets, device_type, &p->device));
  SLIMCUDA_OP_CHECK(is_index_type(indices.dtype()) && is_index_type(offsets.dtype()), Error::InvalidArgument,
                    "_embedding_bag: indices and offsets must be int32 or int64 (dtype codes %d, %d)",
                    static_cast<int>(indices.dtype()), static_cast<int>(offsets.dtype()));
  SLIMCUDA_OP_CHECK(indices.dim() == 1, Error::InvalidArgument,
                    "_embedding_bag: indices has to be a 1-D tensor, but got %lld dimensions",
                    static_cast<long long>(indices.dim()));
  SLIMCUDA_OP_CHECK(offsets.dim() == 1, Error::InvalidArgument,
                    "_embedding_bag: offsets has to be a 1-D tensor, but got %lld dimensions",
                    static_cast<long long>(offsets.dim()));
  p->n = indices.sizes()[0];
  p->offsets_len = offsets.sizes()[0];
  p->index_dtype =
      indices.dtype() == ScalarType::Long || offsets.dtype() == ScalarType::Long ? ScalarType::Long : ScalarType::Int;
  SLIMCUDA_OP_CHECK(!p->include_last_offset || p->offsets_len >= 1, Error::InvalidArgument,
                    "_embedding_bag: include_last_offset needs at least one offset");
  p->num_bags = p->offsets_len - (p->include_last_offset ? 1 : 0);
  if (psw == nullptr) return Error::Ok;
  SLIMCUDA_OP_CHECK(p->mode == BagMode::Sum, Error::InvalidArgument,
                    "_embedding_bag: per_sample_weights only supported with mode='sum'");
  SLIMCUDA_RETURN_IF_ERROR(check_device("per_sample_weights", *psw, device_type, &p->device));
  SLIMCUDA_OP_CHECK(psw->dtype() == p->dtype, Error::InvalidArgument,
                    "_embedding_bag: per_sample_weights must have the weight's dtype (codes %d, %d)",
                    static_cast<int>(psw->dtype()), static_cast<int>(p->dtype));
  SLIMCUDA_OP_CHECK(psw->dim() == 1 && psw->sizes()[0] == p->n, Error::InvalidArgument,
                    "_embedding_bag: per_sample_weights must be 1-D with one weight per index (%lld)",
                    static_cast<long long>(p->n));
  p->per_sample_weights = psw;
  return Error::Ok;
}

}  // namespace

Error check_embedding_bag(DeviceType device_type, AtenTensorHandle weight_h, AtenTensorHandle indices_h,
                          AtenTensorHandle offsets_h, int64_t mode, AtenTensorHandle* psw_h,
                          int32_t include_last_offset, int64_t padding_idx, AtenTensorHandle* const rets[4],
                          EmbeddingBagProblem* p) noexcept {
  SLIMCUDA_OP_CHECK(weight_h != nullptr, Error::InvalidArgument, "_embedding_bag: null weight");
  SLIMCUDA_OP_CHECK(indices_h != nullptr, Error::InvalidArgument, "_embedding_bag: null indices");
  SLIMCUDA_OP_CHECK(offsets_h != nullptr, Error::InvalidArgument, "_embedding_bag: null offsets");
  for (int i = 0; i < 4; ++i) {
    SLIMCUDA_OP_CHECK(rets[i] != nullptr, Error::InvalidArgument, "_embedding_bag: null ret%d", i);
  }
  SLIMCUDA_OP_CHECK(mode >= 0 && mode <= 2, Error::InvalidArgument,
                    "_embedding_bag: mode %lld is not 0 (sum), 1 (mean) or 2 (max)", static_cast<long long>(mode));
  const SlimTensor& weight = *tensor_of(weight_h);
  *p = EmbeddingBagProblem{};
  p->weight = &weight;
  p->indices = tensor_of(indices_h);
  p->offsets = tensor_of(offsets_h);
  p->mode = static_cast<BagMode>(mode);
  p->include_last_offset = include_last_offset != 0;
  p->padding_idx = padding_idx;
  SLIMCUDA_RETURN_IF_ERROR(check_device("weight", weight, device_type, &p->device));
  SLIMCUDA_OP_CHECK(weight.dim() == 2, Error::InvalidArgument,
                    "_embedding_bag: weight has to be a 2-D tensor, but got %lld dimensions",
                    static_cast<long long>(weight.dim()));
  SLIMCUDA_OP_CHECK(is_weight_type(weight.dtype()), Error::NotSupported,
                    "_embedding_bag: weight dtype code %d; supported: float32, float16, bfloat16, float64",
                    static_cast<int>(weight.dtype()));
  p->dtype = weight.dtype();
  p->num_weights = weight.sizes()[0];
  p->dim = weight.sizes()[1];
  const SlimTensor* psw = psw_h != nullptr && *psw_h != nullptr ? tensor_of(*psw_h) : nullptr;
  return check_index_operands(device_type, psw, p);
}

}  // namespace slimcuda::ops
