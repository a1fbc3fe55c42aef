// SPDX-License-Identifier: Apache-2.0
#include "csrc/ops/select/select_cuda.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "csrc/cuda/cuda_error.h"
#include "csrc/memory/device_memory.h"
#include "csrc/memory/pinned_pool.h"
#include "csrc/memory/transfer.h"
#include "csrc/ops/common/op_args.h"
#include "csrc/ops/select/select_kernels.h"
#include "csrc/tensor/layout.h"

namespace slimcuda::ops {
namespace {

constexpr size_t round_up(size_t v) noexcept { return (v + 255) / 256 * 256; }

// Device memory from the caching allocator on ctx's stream, freed (stream-ordered: reused
// only by work queued after what used it) at scope exit.
class DeviceBlock {
 public:
  explicit DeviceBlock(const StreamContext& ctx) noexcept : ctx_(ctx) {}
  ~DeviceBlock() {
    if (ptr_ != nullptr) (void)device_memory::free(ptr_, ctx_.device());
  }
  DeviceBlock(const DeviceBlock&) = delete;  // owns its block
  DeviceBlock& operator=(const DeviceBlock&) = delete;

  Error allocate(size_t bytes) noexcept {
    if (bytes == 0) return Error::Ok;
    auto r = device_memory::allocate(bytes, 0, ctx_);
    if (!r.ok()) return r.error();
    ptr_ = r.value();
    return Error::Ok;
  }
  template <typename T>
  [[nodiscard]] T* at(size_t byte_offset) const noexcept {
    return reinterpret_cast<T*>(static_cast<char*>(ptr_) + byte_offset);
  }

 private:
  StreamContext ctx_;
  void* ptr_ = nullptr;
};

// Pinned host memory, returned to the pinned pool at scope exit.
class PinnedBlock {
 public:
  PinnedBlock() noexcept = default;
  ~PinnedBlock() { pinned_free(ptr_); }
  PinnedBlock(const PinnedBlock&) = delete;  // owns its block
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  Error allocate(size_t bytes, const StreamContext& ctx) noexcept { return pinned_allocate(bytes, ctx, &ptr_); }
  [[nodiscard]] const int64_t* get() const noexcept { return static_cast<const int64_t*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

// A capturing stream cannot wait for a count (cudaStreamSynchronize or an event wait would
// invalidate the capture): refused before anything is enqueued, so the capture goes on.
Error refuse_capture(const char* op, const StreamContext& ctx) noexcept {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t err = cudaStreamIsCapturing(ctx.stream(), &status);
  // The legacy stream asked while another stream captures globally: capturing as well.
  const bool capturing =
      err == cudaErrorStreamCaptureImplicit || (err == cudaSuccess && status != cudaStreamCaptureStatusNone);
  if (err != cudaSuccess) (void)cudaGetLastError();
  SLIMCUDA_OP_CHECK(!capturing, Error::NotSupported,
                    "%s has a data-dependent output size (one stream synchronization reads it back), which a CUDA "
                    "graph cannot capture",
                    op);
  SLIMCUDA_CUDA_TRY(err);
  return Error::Ok;
}

// The one synchronization: `n` int64 counts copied from the device into pinned memory,
// waited for (transfer's blocking contract: an event after the copy), into *host.
Error read_counts(const int64_t* device, size_t n, const StreamContext& ctx, std::vector<int64_t>* host) {
  PinnedBlock pinned;
  SLIMCUDA_OP_TRY(pinned.allocate(n * sizeof(int64_t), ctx));
  SLIMCUDA_OP_TRY(transfer::device_to_host(const_cast<int64_t*>(pinned.get()), device, n * sizeof(int64_t), ctx));
  host->assign(pinned.get(), pinned.get() + n);
  return Error::Ok;
}

Error new_cuda(ScalarType dtype, const StreamContext& ctx, const std::vector<int64_t>& sizes,
               const std::vector<int64_t>& strides, std::unique_ptr<SlimTensor>* out) {
  return new_tensor(dtype, DeviceType::CUDA, ctx.device(), sizes, strides, ctx, out);
}

// The selected linear indices of s (n int64) and their count (one int64) in `block` at
// offsets 0 and round_up(8 n), CUB's scratch after them; enqueued, not waited for.
Error select_into(const NonzeroScan& s, DeviceBlock* block, const StreamContext& ctx, int64_t** idx, int64_t** count) {
  const size_t n = static_cast<size_t>(s.n);
  size_t scratch = 0;
  SLIMCUDA_OP_TRY(select_nonzero(s, nullptr, nullptr, nullptr, &scratch, ctx.stream()));
  const size_t at_count = round_up(n * 8), at_scratch = at_count + 256;
  SLIMCUDA_OP_TRY(block->allocate(at_scratch + scratch));
  *idx = block->at<int64_t>(0);
  *count = block->at<int64_t>(at_count);
  SLIMCUDA_OP_TRY(select_nonzero(s, *idx, *count, block->at<void>(at_scratch), &scratch, ctx.stream()));
  return Error::Ok;
}

}  // namespace

Error nonzero_cuda(const NonzeroProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  std::vector<int64_t> sizes, strides;
  if (p.size >= 0) {  // nonzero_static: the size is given; the count stays on the device
    nonzero_layout(DeviceType::CUDA, p, p.size, &sizes, &strides);
    SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, sizes, strides, out));
    const CoordsWrite w = coords_write(p, p.size, strides, static_cast<int64_t*>((*out)->data_ptr()));
    if (p.scan.n == 0) return launch_coords(w, nullptr, 0, nullptr, ctx.stream());
    DeviceBlock block(ctx);
    int64_t *idx = nullptr, *count = nullptr;
    SLIMCUDA_OP_TRY(select_into(p.scan, &block, ctx, &idx, &count));
    return launch_coords(w, idx, 0, count, ctx.stream());
  }
  if (p.scan.n == 0) {
    nonzero_layout(DeviceType::CUDA, p, 0, &sizes, &strides);
    return new_cuda(ScalarType::Long, ctx, sizes, strides, out);
  }
  SLIMCUDA_OP_TRY(refuse_capture("nonzero", ctx));
  DeviceBlock block(ctx);
  int64_t *idx = nullptr, *count = nullptr;
  SLIMCUDA_OP_TRY(select_into(p.scan, &block, ctx, &idx, &count));
  std::vector<int64_t> n;
  SLIMCUDA_OP_TRY(read_counts(count, 1, ctx, &n));
  nonzero_layout(DeviceType::CUDA, p, n[0], &sizes, &strides);
  SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, sizes, strides, out));
  return launch_coords(coords_write(p, n[0], strides, static_cast<int64_t*>((*out)->data_ptr())), idx, n[0], nullptr,
                       ctx.stream());
}

Error masked_select_cuda(const MaskedSelectProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  if (p.mask.n == 0) return new_cuda(p.self->dtype(), ctx, {0}, {1}, out);
  SLIMCUDA_OP_TRY(refuse_capture("masked_select", ctx));
  DeviceBlock block(ctx);
  int64_t *idx = nullptr, *count = nullptr;
  SLIMCUDA_OP_TRY(select_into(p.mask, &block, ctx, &idx, &count));
  std::vector<int64_t> n;
  SLIMCUDA_OP_TRY(read_counts(count, 1, ctx, &n));
  SLIMCUDA_OP_TRY(new_cuda(p.self->dtype(), ctx, {n[0]}, {1}, out));
  return launch_take(p.self_walk, static_cast<const char*>(p.self->data_ptr()), p.es, idx, n[0],
                     static_cast<char*>((*out)->data_ptr()), ctx.stream());
}

Error index_cuda(const IndexProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  const size_t masks = p.masks.size();
  bool any_data = false;
  for (const NonzeroScan& m : p.masks) any_data = any_data || m.n > 0;
  if (any_data) SLIMCUDA_OP_TRY(refuse_capture("index with a bool or uint8 index", ctx));
  // Every mask's selection, their counts side by side: one read-back for all of them.
  std::vector<std::unique_ptr<DeviceBlock>> selections;
  std::vector<int64_t*> idx(masks, nullptr);
  DeviceBlock counts_block(ctx);
  SLIMCUDA_OP_TRY(counts_block.allocate(masks * sizeof(int64_t)));
  std::vector<int64_t> counts(masks, 0);
  if (any_data) {
    for (size_t m = 0; m < masks; ++m) {
      if (p.masks[m].n == 0) {
        SLIMCUDA_CUDA_TRY(cudaMemsetAsync(counts_block.at<int64_t>(m * 8), 0, 8, ctx.stream()));
        continue;
      }
      selections.push_back(std::make_unique<DeviceBlock>(ctx));
      int64_t* count = nullptr;
      SLIMCUDA_OP_TRY(select_into(p.masks[m], selections.back().get(), ctx, &idx[m], &count));
      SLIMCUDA_CUDA_TRY(
          cudaMemcpyAsync(counts_block.at<int64_t>(m * 8), count, 8, cudaMemcpyDeviceToDevice, ctx.stream()));
    }
    SLIMCUDA_OP_TRY(read_counts(counts_block.at<int64_t>(0), masks, ctx, &counts));
  }
  // Each mask's coordinates, column-major [count, ndim]: column j indexes its j-th dimension.
  std::vector<std::unique_ptr<DeviceBlock>> coords;
  std::vector<const int64_t*> at(masks, nullptr);
  for (size_t m = 0; m < masks; ++m) {
    CoordsWrite w;
    w.ndim = p.masks[m].walk.ndim;
    for (int d = 0; d < w.ndim; ++d) w.sizes[d] = p.masks[m].walk.sizes[d];
    w.rows = counts[m], w.row_stride = 1, w.col_stride = counts[m];
    coords.push_back(std::make_unique<DeviceBlock>(ctx));
    SLIMCUDA_OP_TRY(coords.back()->allocate(static_cast<size_t>(counts[m] * w.ndim) * sizeof(int64_t)));
    w.out = coords.back()->at<int64_t>(0);
    at[m] = w.out;
    if (counts[m] > 0) SLIMCUDA_OP_TRY(launch_coords(w, idx[m], counts[m], nullptr, ctx.stream()));
  }
  IndexGather g;
  std::vector<int64_t> sizes, strides;
  SLIMCUDA_RETURN_IF_ERROR(index_layout(p, counts, at, &g, &sizes, &strides));
  SLIMCUDA_OP_TRY(new_cuda(p.self->dtype(), ctx, sizes, strides, out));
  g.out = static_cast<char*>((*out)->data_ptr());
  return launch_index_gather(g, ctx.stream());
}

Error unique_cuda(const UniqueProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]) {
  const std::vector<int64_t> inv_sizes = p.return_inverse ? p.self->sizes() : std::vector<int64_t>{0};
  if (p.n == 0) {
    SLIMCUDA_OP_TRY(new_cuda(p.self->dtype(), ctx, {0}, {1}, &out[0]));
    SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, inv_sizes, contiguous_strides(inv_sizes), &out[1]));
    return new_cuda(ScalarType::Long, ctx, {0}, {1}, &out[2]);
  }
  SLIMCUDA_OP_TRY(refuse_capture(p.op, ctx));
  UniqueScan u;
  u.in = static_cast<const char*>(p.self->data_ptr());
  u.walk = p.walk;
  u.n = p.n;
  u.es = p.es;
  u.dtype = p.dtype;
  u.floating = p.floating;
  u.consecutive = p.consecutive;
  UniqueBuffers b;
  size_t scratch = 0;
  SLIMCUDA_OP_TRY(unique_runs(u, b, nullptr, &scratch, ctx.stream()));
  const size_t part = round_up(static_cast<size_t>(p.n) * 8);
  DeviceBlock block(ctx);
  SLIMCUDA_OP_TRY(block.allocate(7 * part + 256 + scratch));
  b.keys = block.at<uint64_t>(0);
  b.sorted_keys = block.at<uint64_t>(part);
  b.pos = block.at<int64_t>(2 * part);
  b.sorted_pos = block.at<int64_t>(3 * part);
  b.flags = block.at<int64_t>(4 * part);
  b.group = block.at<int64_t>(5 * part);
  b.heads = block.at<int64_t>(6 * part);
  b.count = block.at<int64_t>(7 * part);
  SLIMCUDA_OP_TRY(unique_runs(u, b, block.at<void>(7 * part + 256), &scratch, ctx.stream()));
  std::vector<int64_t> groups;
  SLIMCUDA_OP_TRY(read_counts(b.count, 1, ctx, &groups));
  SLIMCUDA_OP_TRY(new_cuda(p.self->dtype(), ctx, {groups[0]}, {1}, &out[0]));
  SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, inv_sizes, contiguous_strides(inv_sizes), &out[1]));
  SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, {p.return_counts ? groups[0] : 0}, {1}, &out[2]));
  return unique_outputs(u, b, groups[0], static_cast<char*>(out[0]->data_ptr()),
                        p.return_inverse ? static_cast<int64_t*>(out[1]->data_ptr()) : nullptr,
                        p.return_counts ? static_cast<int64_t*>(out[2]->data_ptr()) : nullptr, ctx.stream());
}

Error unique_dim_cuda(const UniqueDimProblem& p, const StreamContext& ctx, std::unique_ptr<SlimTensor> out[3]) {
  const SliceScan& s = p.scan;
  std::vector<int64_t> sizes, strides;
  Walk rest;
  int64_t groups = 0;
  SliceBuffers b;
  DeviceBlock block(ctx);
  if (s.slices > 0) {
    SLIMCUDA_OP_TRY(refuse_capture(p.op, ctx));
    size_t scratch = 0;
    SLIMCUDA_OP_TRY(unique_slice_runs(s, b, nullptr, &scratch, ctx.stream()));
    const size_t part = round_up(static_cast<size_t>(s.slices) * 8);
    SLIMCUDA_OP_TRY(block.allocate(7 * part + 256 + scratch));
    b.order = block.at<int64_t>(0);
    b.order_alt = block.at<int64_t>(part);
    b.keys = block.at<uint64_t>(2 * part);
    b.sorted_keys = block.at<uint64_t>(3 * part);
    b.flags = block.at<int64_t>(4 * part);
    b.group = block.at<int64_t>(5 * part);
    b.heads = block.at<int64_t>(6 * part);
    b.count = block.at<int64_t>(7 * part);
    SLIMCUDA_OP_TRY(unique_slice_runs(s, b, block.at<void>(7 * part + 256), &scratch, ctx.stream()));
    std::vector<int64_t> n;
    SLIMCUDA_OP_TRY(read_counts(b.count, 1, ctx, &n));
    groups = n[0];
  }
  unique_dim_layout(p, groups, &sizes, &strides, &rest);
  SLIMCUDA_OP_TRY(new_cuda(p.self->dtype(), ctx, sizes, strides, &out[0]));
  SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, {p.return_inverse ? s.slices : 0}, {1}, &out[1]));
  SLIMCUDA_OP_TRY(new_cuda(ScalarType::Long, ctx, {p.return_counts ? groups : 0}, {1}, &out[2]));
  return unique_slice_outputs(s, b, groups, static_cast<char*>(out[0]->data_ptr()), strides[static_cast<size_t>(p.dim)],
                              rest, p.return_inverse ? static_cast<int64_t*>(out[1]->data_ptr()) : nullptr,
                              p.return_counts ? static_cast<int64_t*>(out[2]->data_ptr()) : nullptr, ctx.stream());
}

}  // namespace slimcuda::ops
