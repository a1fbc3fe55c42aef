// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/scatter/scatter_cuda.h"

#include <cstring>

#include "csrc/memory/device_memory.h"
#include "csrc/ops/scatter/scatter_kernels.h"
#include "csrc/tensor/copy.h"
#include "slimcuda/last_error.h"

namespace slimcuda::ops {
namespace {

// Scratch from the caching allocator on ctx's stream, freed stream-ordered by the owner's
// destructor (the block is reused only by work queued after the op's).
class Scratch {
 public:
  Scratch(int device) : device_(device) {}
  Scratch(const Scratch&) = delete;             // one owner of the block
  Scratch& operator=(const Scratch&) = delete;  // likewise
  ~Scratch() {
    if (ptr_ != nullptr) (void)device_memory::free(ptr_, device_);
  }
  [[nodiscard]] Error allocate(const char* op, size_t bytes, const StreamContext& ctx) {
    if (bytes == 0) return Error::Ok;
    auto m = device_memory::allocate(bytes, 0, ctx);
    if (!m.ok()) return set_last_error(m.error(), "%s: no %zu bytes of scratch: %s", op, bytes, last_error_message());
    ptr_ = m.value();
    return Error::Ok;
  }
  [[nodiscard]] void* get() const noexcept { return ptr_; }

 private:
  int device_;
  void* ptr_ = nullptr;
};

}  // namespace

Error scatter_cuda(const ScatterProblem& p, const StreamContext& ctx) {
  if (p.copy_self) SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*p.out, *p.self, ctx));
  if (p.layout.numel == 0) return Error::Ok;
  ScatterLaunch s;
  s.layout = p.layout;
  s.index = p.index->data_ptr();
  s.src = p.src != nullptr ? p.src->data_ptr() : nullptr;
  s.out = p.out->data_ptr();
  s.dtype = static_cast<int>(p.dtype);
  s.es = static_cast<int>(p.out->element_size());
  s.reduce = p.reduce;
  s.include_self = p.include_self;
  std::memcpy(s.value, p.value, sizeof s.value);
  std::memcpy(s.identity, p.identity, sizeof s.identity);
  const SlimTensor& out = *p.out;
  s.out_rank = static_cast<int>(out.dim());
  for (int d = 0; d < s.out_rank; ++d) {
    s.out_sizes[d] = out.sizes()[static_cast<size_t>(d)];
    s.out_strides[d] = out.strides()[static_cast<size_t>(d)];
  }
  s.out_numel = out.numel();
  Scratch counts(ctx.device());
  if (p.reduce == ScatterReduce::Mean) {
    SLIMCUDA_RETURN_IF_ERROR(
        counts.allocate("scatter_reduce", static_cast<size_t>(s.out_numel) * sizeof(int64_t), ctx));
    s.counts = static_cast<int64_t*>(counts.get());
  }
  return launch_scatter(s, ctx.stream());
}

Error index_put_cuda(const IndexPutProblem& p, SlimTensor& out, const StreamContext& ctx) {
  SLIMCUDA_RETURN_IF_ERROR(copy_tensor(out, *p.self, ctx));
  IndexPutLaunch s;
  s.layout = p.layout;
  s.out = out.data_ptr();
  s.values = p.values->data_ptr();
  s.dtype = static_cast<int>(p.dtype);
  s.es = static_cast<int>(out.element_size());
  s.accumulate = p.accumulate;
  return launch_index_put(s, ctx.stream());
}

Error masked_scatter_cuda(const MaskedScatterProblem& p, SlimTensor& out, const StreamContext& ctx) {
  const SlimTensor self(p.self->storage(), p.out_sizes, p.self_strides, p.dtype, p.self->storage_offset());
  SLIMCUDA_RETURN_IF_ERROR(copy_tensor(out, self, ctx));
  MaskedScatterLaunch s;
  s.layout = p.layout;
  s.mask = static_cast<const uint8_t*>(p.mask->data_ptr());
  s.source = p.source->data_ptr();
  s.out = out.data_ptr();
  s.es = static_cast<int>(out.element_size());
  size_t bytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(masked_scatter_scratch_bytes(s, &bytes));
  Scratch scratch(ctx.device());
  SLIMCUDA_RETURN_IF_ERROR(scratch.allocate("masked_scatter", bytes, ctx));
  return launch_masked_scatter(s, scratch.get(), bytes, ctx.stream());
}

}  // namespace slimcuda::ops
