// SPDX-License-Identifier: Apache-2.0
#include "csrc/graph/graph_runner.h"

#include <algorithm>
#include <new>
#include <utility>

#include "csrc/cuda/cuda_error.h"
#include "csrc/cuda/device.h"
#include "csrc/cuda/stream_context.h"
#include "csrc/memory/device_memory.h"
#include "csrc/tensor/copy.h"
#include "csrc/tensor/layout.h"
#include "slimcuda/last_error.h"

namespace slimcuda::graph {

struct GraphRunner::Captured {
  // One copy between a caller's tensor and a static one, as a memcpy node of `graph` that
  // each replay points at that call's tensor: the whole replay is one launch.
  struct Copy {
    cudaGraphNode_t node = nullptr;  // null: no node (nothing to copy, or a layout a span copy cannot take)
    size_t bytes = 0;                // the span the tensor's sizes and strides reach
    bool enabled = true;             // false: the last update failed; the copy went on the stream instead
  };

  std::vector<int64_t> key;
  std::unique_ptr<device_memory::PrivatePool> pool;
  std::vector<std::unique_ptr<SlimTensor>> inputs, outputs;  // static: the graph's own
  std::vector<Copy> copy_in, copy_out;
  std::shared_ptr<Storage> shadow;  // the copies' operands at instantiation: memory that lives with the graph
  cudaGraph_t graph = nullptr;      // input copies -> the captured run -> output copies; names the nodes to update
  cudaGraphExec_t exec = nullptr;
  cudaEvent_t done = nullptr;          // recorded after each replay's last copy
  cudaStream_t last_stream = nullptr;  // where the last replay ran (nullptr: none yet)

  ~Captured() {
    // A replay may still be running: its memory must outlive it.
    if (last_stream != nullptr && cudaEventSynchronize(done) != cudaSuccess) (void)cudaGetLastError();
    if (exec != nullptr && cudaGraphExecDestroy(exec) != cudaSuccess) (void)cudaGetLastError();
    if (graph != nullptr && cudaGraphDestroy(graph) != cudaSuccess) (void)cudaGetLastError();
    if (done != nullptr && cudaEventDestroy(done) != cudaSuccess) (void)cudaGetLastError();
    outputs.clear();  // blocks of the pool: returned before it goes
    inputs.clear();
    shadow.reset();
    pool.reset();
  }
};

namespace {

// A new tensor like `like` (dtype, sizes, strides) on `ctx`'s device and stream.
Error new_like(const SlimTensor& like, const StreamContext& ctx, std::unique_ptr<SlimTensor>* out) {
  EmptySpec spec;
  SLIMCUDA_RETURN_IF_ERROR(check_empty(like.dim(), like.sizes().data(), like.strides().data(),
                                       static_cast<int32_t>(like.dtype()), static_cast<int32_t>(DeviceType::CUDA),
                                       ctx.device(), false, &spec));
  SlimTensor* t = nullptr;
  SLIMCUDA_RETURN_IF_ERROR(empty_strided(spec, ctx, &t));
  out->reset(t);
  return Error::Ok;
}

// Handles the container may steal (it deletes what it is given): new ones to the same tensors.
Error borrow_handles(const std::vector<std::unique_ptr<SlimTensor>>& ts, std::vector<void*>* out) {
  out->assign(ts.size(), nullptr);
  try {
    for (size_t i = 0; i < ts.size(); ++i) (*out)[i] = new SlimTensor(*ts[i]);
  } catch (const std::bad_alloc&) {
    for (void* h : *out) delete static_cast<SlimTensor*>(h);
    out->clear();
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
  return Error::Ok;
}

void drop(std::vector<void*>* handles) {
  for (void* h : *handles) delete static_cast<SlimTensor*>(h);
  handles->clear();
}

// The bytes from t's first element to its last that its sizes and strides reach: what one
// 1-D copy between two tensors of the same layout moves (0 for an empty tensor). Every
// tensor here passed check_shape, so no stride is negative.
Error span_bytes(const SlimTensor& t, size_t* out) {
  int64_t bytes = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_bytes(t.dim(), t.sizes().data(), t.strides().data(), 0, t.element_size(), &bytes));
  *out = static_cast<size_t>(bytes);
  return Error::Ok;
}

// Calls word(w) for each word of the inputs' layout in order (per input: dtype, rank, sizes,
// strides) until it returns false; whether it never did. layout_key and same_layout both
// walk the layout through here, so the key has one format.
template <typename Word>
bool walk_layout(SlimTensor* const* inputs, size_t num_inputs, Word&& word) {
  for (size_t i = 0; i < num_inputs; ++i) {
    const SlimTensor& t = *inputs[i];
    if (!word(static_cast<int64_t>(t.dtype())) || !word(t.dim())) return false;
    for (int64_t s : t.sizes()) {
      if (!word(s)) return false;
    }
    for (int64_t s : t.strides()) {
      if (!word(s)) return false;
    }
  }
  return true;
}

// Whether `inputs` have the layout `key` was made from (layout_key), without building one.
bool same_layout(const std::vector<int64_t>& key, SlimTensor* const* inputs, size_t num_inputs) {
  size_t k = 0;
  const bool prefix = walk_layout(inputs, num_inputs, [&](int64_t w) { return k < key.size() && key[k++] == w; });
  return prefix && k == key.size();
}

// Points copy `c` at dst/src for the next launch of `exec`. *on_stream true: there are bytes
// to copy and the node cannot take these pointers (memory the graph cannot address the same
// way), so it is now disabled and the caller copies on the stream. An error only when the
// node could be neither updated nor disabled (it would copy stale pointers).
Error point_copy(cudaGraphExec_t exec, GraphRunner::Captured::Copy& c, void* dst, const void* src, bool* on_stream) {
  *on_stream = false;
  if (c.node == nullptr) {  // made only for c.bytes != 0
    *on_stream = c.bytes != 0;
    return Error::Ok;
  }
  if (cudaGraphExecMemcpyNodeSetParams1D(exec, c.node, dst, src, c.bytes, cudaMemcpyDeviceToDevice) == cudaSuccess) {
    if (!c.enabled) SLIMCUDA_CUDA_TRY(cudaGraphNodeSetEnabled(exec, c.node, 1));
    c.enabled = true;
    return Error::Ok;
  }
  (void)cudaGetLastError();
  if (c.enabled) SLIMCUDA_CUDA_TRY(cudaGraphNodeSetEnabled(exec, c.node, 0));
  c.enabled = false;
  *on_stream = true;
  return Error::Ok;
}

std::string cuda_text(cudaError_t err) { return std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err); }

}  // namespace

std::vector<int64_t> layout_key(SlimTensor* const* inputs, size_t num_inputs) {
  std::vector<int64_t> key;
  walk_layout(inputs, num_inputs, [&](int64_t w) {
    key.push_back(w);
    return true;
  });
  return key;
}

GraphRunner::GraphRunner(ContainerAbi abi, std::shared_ptr<void> keep_alive, int device, size_t slots, GraphMode mode,
                         OutputCheck check) noexcept
    : abi_(std::move(abi)), keep_alive_(std::move(keep_alive)), device_(device), mode_(mode), check_(std::move(check)) {
  try {
    slots_.resize(slots);
  } catch (const std::bad_alloc&) {
    slots_.clear();  // run() then always falls back
  }
}

GraphRunner::~GraphRunner() {
  slots_.clear();  // graphs first: they wait for their last replays
  // Not on a lost context: the container's destructor throws when cudaFree fails.
  if (container_ != nullptr && abi_.destroy != nullptr && !cuda::device_lost(device_)) abi_.destroy(container_);
}

GraphStats GraphRunner::stats() const noexcept {
  GraphStats s;
  s.captures = captures_.load(std::memory_order_relaxed);
  s.replays = replays_.load(std::memory_order_relaxed);
  s.fallbacks = fallbacks_.load(std::memory_order_relaxed);
  s.graphs = graphs_.load(std::memory_order_relaxed);
  return s;
}

std::string GraphRunner::last_failure() const {
  std::lock_guard<std::mutex> lock(mu_);
  return last_failure_;
}

void GraphRunner::note_failure(const std::vector<int64_t>& key, const std::string& why) noexcept {
  try {
    std::lock_guard<std::mutex> lock(mu_);
    failed_.push_back(key);
    last_failure_ = why;
  } catch (const std::bad_alloc&) {
    // Not remembered: the next run of this layout tries to capture again.
  }
}

Error GraphRunner::ensure_container() noexcept {
  if (container_ != nullptr) return Error::Ok;
  SLIMCUDA_CHECK_OR_RETURN(abi_.create != nullptr && abi_.destroy != nullptr, Error::NotSupported,
                           "the model library cannot make a second container");
  SLIMCUDA_CHECK_OR_RETURN(abi_.run_single_threaded != nullptr, Error::NotSupported,
                           "the model library has no AOTInductorModelContainerRunSingleThreaded, which capturing "
                           "needs");
  clear_last_error();
  void* c = nullptr;
  const int32_t rc = abi_.create(&c, 1, abi_.device_str.c_str(), nullptr);
  if (rc != 0 || c == nullptr) {
    if (c != nullptr) abi_.destroy(c);
    const std::string why = last_error_message();
    return set_last_error(Error::NotSupported, "the capture container could not be created (error %d%s%s)", rc,
                          why.empty() ? "" : ": ", why.c_str());
  }
  if (abi_.prepare) {
    const Error e = abi_.prepare(c);
    if (e != Error::Ok) {
      const std::string why = last_error_message();
      abi_.destroy(c);
      return set_last_error(Error::NotSupported, "the capture container could not be prepared: %s", why.c_str());
    }
  }
  container_ = c;
  return Error::Ok;
}

namespace {

// Makes g.graph: a memcpy node per input (caller's tensor -> static input), the captured run
// as a child graph after them, a memcpy node per output (static output -> the call's new
// tensor) after it. Takes `run` (destroyed here, as the child node holds a copy). The nodes
// are made on the shadow buffer, which lives as long as the graph; every replay points them
// at its own tensors before launching.
Error wrap_in_copies(GraphRunner::Captured& g, cudaGraph_t run, const StreamContext& ctx) {
  struct Owned {
    cudaGraph_t graph;
    ~Owned() {
      if (graph != nullptr && cudaGraphDestroy(graph) != cudaSuccess) (void)cudaGetLastError();
    }
  } owned{run};
  g.copy_in.resize(g.inputs.size());
  g.copy_out.resize(g.outputs.size());
  size_t most = 0;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    SLIMCUDA_RETURN_IF_ERROR(span_bytes(*g.inputs[i], &g.copy_in[i].bytes));
    most = std::max(most, g.copy_in[i].bytes);
  }
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    SLIMCUDA_RETURN_IF_ERROR(span_bytes(*g.outputs[i], &g.copy_out[i].bytes));
    most = std::max(most, g.copy_out[i].bytes);
  }
  SLIMCUDA_RETURN_IF_ERROR(
      Storage::allocate(most, Device{DeviceType::CUDA, static_cast<DeviceIndex>(ctx.device())}, ctx, &g.shadow));
  SLIMCUDA_CUDA_TRY(cudaGraphCreate(&g.graph, 0));
  std::vector<cudaGraphNode_t> before;
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    GraphRunner::Captured::Copy& c = g.copy_in[i];
    if (c.bytes == 0) continue;
    SLIMCUDA_CUDA_TRY(cudaGraphAddMemcpyNode1D(&c.node, g.graph, nullptr, 0, g.inputs[i]->data_ptr(), g.shadow->data(),
                                               c.bytes, cudaMemcpyDeviceToDevice));
    before.push_back(c.node);
  }
  cudaGraphNode_t model = nullptr;
  SLIMCUDA_CUDA_TRY(cudaGraphAddChildGraphNode(&model, g.graph, before.data(), before.size(), run));
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    GraphRunner::Captured::Copy& c = g.copy_out[i];
    if (c.bytes == 0) continue;
    SLIMCUDA_CUDA_TRY(cudaGraphAddMemcpyNode1D(&c.node, g.graph, &model, 1, g.shadow->data(), g.outputs[i]->data_ptr(),
                                               c.bytes, cudaMemcpyDeviceToDevice));
  }
  return Error::Ok;
}

}  // namespace

Error GraphRunner::run(size_t slot, SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs,
                       size_t num_outputs, cudaStream_t stream, bool* handled) noexcept {
  *handled = false;
  if (mode_ == GraphMode::Off || slot >= slots_.size() || num_outputs > kMaxOutputs) return Error::Ok;
  try {
    std::vector<std::unique_ptr<Captured>>& mine = slots_[slot];
    auto it =
        std::find_if(mine.begin(), mine.end(), [&](const auto& g) { return same_layout(g->key, inputs, num_inputs); });
    if (it == mine.end()) {
      std::vector<int64_t> key = layout_key(inputs, num_inputs);
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (std::find(failed_.begin(), failed_.end(), key) != failed_.end()) {
          SLIMCUDA_CHECK_OR_RETURN(mode_ != GraphMode::Strict, Error::NotSupported,
                                   "this input layout cannot be captured into a CUDA graph: %s", last_failure_.c_str());
          fallbacks_.fetch_add(1, std::memory_order_relaxed);
          return Error::Ok;
        }
      }
      if (mine.size() >= kMaxGraphsPerSlot) {
        SLIMCUDA_CHECK_OR_RETURN(mode_ != GraphMode::Strict, Error::NotSupported,
                                 "%zu graphs already captured for this instance (the limit)", kMaxGraphsPerSlot);
        fallbacks_.fetch_add(1, std::memory_order_relaxed);
        return Error::Ok;
      }
      // Streams that synchronize with the legacy default stream cannot be captured safely
      // while other threads use it; the legacy stream itself cannot be captured at all.
      unsigned int flags = 0;
      const bool capturable = stream != nullptr && cudaStreamGetFlags(stream, &flags) == cudaSuccess &&
                              (flags & cudaStreamNonBlocking) != 0;
      if (!capturable) {
        (void)cudaGetLastError();
        SLIMCUDA_CHECK_OR_RETURN(mode_ != GraphMode::Strict, Error::NotSupported,
                                 "CUDA graphs need a non-blocking stream (cudaStreamNonBlocking)");
        fallbacks_.fetch_add(1, std::memory_order_relaxed);
        return Error::Ok;
      }
      std::unique_ptr<Captured> g;
      const Error e = capture(key, inputs, num_inputs, num_outputs, stream, &g);
      if (e != Error::Ok) {
        const std::string why = last_error_message();
        note_failure(key, why);
        if (mode_ == GraphMode::Strict) {
          return set_last_error(Error::NotSupported, "the model run cannot be captured into a CUDA graph: %s",
                                why.c_str());
        }
        clear_last_error();
        fallbacks_.fetch_add(1, std::memory_order_relaxed);
        return Error::Ok;
      }
      mine.push_back(std::move(g));
      captures_.fetch_add(1, std::memory_order_relaxed);
      graphs_.fetch_add(1, std::memory_order_relaxed);
      it = mine.end() - 1;
    }
    SLIMCUDA_RETURN_IF_ERROR(replay(**it, inputs, num_inputs, outputs, num_outputs, stream));
    replays_.fetch_add(1, std::memory_order_relaxed);
    *handled = true;
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory");
  }
}

// A real run before the capture (lazy initialisation, autotuning, first allocations), its
// writes to the state undone from `saved` (null: no state) whether it ran or failed.
Error GraphRunner::warm_up(Captured& g, size_t num_inputs, size_t num_outputs, cudaStream_t stream,
                           const Storage* saved) {
  std::vector<void*> in, outs(num_outputs, nullptr);
  SLIMCUDA_RETURN_IF_ERROR(borrow_handles(g.inputs, &in));
  clear_last_error();
  const int32_t rc = abi_.run_single_threaded(container_, in.data(), num_inputs, outs.data(), num_outputs, stream,
                                              abi_.proxy_executor);
  in.clear();  // stolen by the container
  drop(&outs);
  // The warm-up's writes undone, whether it ran or failed: the replay makes this call's.
  if (saved != nullptr) SLIMCUDA_RETURN_IF_ERROR(abi_.restore_state(stream, *saved));
  if (rc != 0) {
    const std::string why = last_error_message();
    return set_last_error(Error::InvalidProgram, "the warm-up run failed with %d%s%s", rc, why.empty() ? "" : ": ",
                          why.c_str());
  }
  SLIMCUDA_CUDA_TRY(cudaStreamSynchronize(stream));
  return Error::Ok;
}

// The second run, captured on `stream` into `*graph`; the outputs it makes are g's.
Error GraphRunner::record(Captured& g, size_t num_inputs, size_t num_outputs, cudaStream_t stream, cudaGraph_t* graph) {
  std::vector<void*> in, outs(num_outputs, nullptr);
  SLIMCUDA_RETURN_IF_ERROR(borrow_handles(g.inputs, &in));
  g.pool->set_capturing(true);
  const cuda::CapturingStream capturing(stream, device_);
  if (const cudaError_t err = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal); err != cudaSuccess) {
    (void)cudaGetLastError();
    g.pool->set_capturing(false);
    drop(&in);
    return set_last_error(Error::NotSupported, "cudaStreamBeginCapture failed: %s", cuda_text(err).c_str());
  }
  clear_last_error();
  const int32_t rc = abi_.run_single_threaded(container_, in.data(), num_inputs, outs.data(), num_outputs, stream,
                                              abi_.proxy_executor);
  in.clear();
  const std::string run_why = last_error_message();
  const cudaError_t end = cudaStreamEndCapture(stream, graph);  // always: leaves capture mode
  g.pool->set_capturing(false);
  if (end != cudaSuccess) (void)cudaGetLastError();
  for (void* h : outs) g.outputs.emplace_back(static_cast<SlimTensor*>(h));
  outs.clear();
  if (rc != 0 || end != cudaSuccess || *graph == nullptr) {
    if (*graph != nullptr && cudaGraphDestroy(*graph) != cudaSuccess) (void)cudaGetLastError();
    *graph = nullptr;
    // What the capture broke (a synchronizing call, an allocation): the capture's own
    // error, or the run's report of it.
    if (rc != 0) {
      return set_last_error(Error::NotSupported, "the run failed while capturing (%d%s%s%s%s)", rc,
                            run_why.empty() ? "" : ": ", run_why.c_str(), end != cudaSuccess ? "; capture: " : "",
                            end != cudaSuccess ? cuda_text(end).c_str() : "");
    }
    return set_last_error(Error::NotSupported, "the capture failed: %s", cuda_text(end).c_str());
  }
  return Error::Ok;
}

Error GraphRunner::capture(std::vector<int64_t> key, SlimTensor* const* inputs, size_t num_inputs, size_t num_outputs,
                           cudaStream_t stream, std::unique_ptr<Captured>* out) noexcept {
  std::lock_guard<std::mutex> lock(capture_mu_);
  SLIMCUDA_RETURN_IF_ERROR(ensure_container());
  auto g = std::make_unique<Captured>();
  g->key = std::move(key);
  SLIMCUDA_RETURN_IF_ERROR(device_memory::PrivatePool::create(device_, &g->pool));
  const StreamContext ctx = StreamContext::selected(stream, device_);
  std::shared_ptr<Storage> saved;  // the state before the warm-up run (outside the graph's pool)
  if (abi_.save_state && abi_.restore_state) SLIMCUDA_RETURN_IF_ERROR(abi_.save_state(stream, &saved));
  {
    device_memory::StreamRoute route(stream, g->pool.get());
    SLIMCUDA_RETURN_IF_ERROR(route.error());
    // 2. Static inputs, from the pool.
    for (size_t i = 0; i < num_inputs; ++i) {
      std::unique_ptr<SlimTensor> t;
      SLIMCUDA_RETURN_IF_ERROR(new_like(*inputs[i], ctx, &t));
      SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*t, *inputs[i], ctx));
      g->inputs.push_back(std::move(t));
    }
    // 3. Warm-up, for real. 4. Capture.
    SLIMCUDA_RETURN_IF_ERROR(warm_up(*g, num_inputs, num_outputs, stream, saved.get()));
    cudaGraph_t graph = nullptr;
    SLIMCUDA_RETURN_IF_ERROR(record(*g, num_inputs, num_outputs, stream, &graph));
    for (size_t i = 0; i < g->outputs.size(); ++i) {
      SLIMCUDA_CHECK_OR_RETURN(g->outputs[i] != nullptr, Error::InvalidProgram, "the model returned no output %zu", i);
      SLIMCUDA_RETURN_IF_ERROR(check_(*g->outputs[i], i));
    }
    // 5. The replay graph around the run, then instantiated.
    SLIMCUDA_RETURN_IF_ERROR(wrap_in_copies(*g, graph, ctx));
    const cudaError_t inst = cudaGraphInstantiate(&g->exec, g->graph, 0);
    if (inst != cudaSuccess) {
      (void)cudaGetLastError();
      g->exec = nullptr;
      return set_last_error(Error::NotSupported, "cudaGraphInstantiate failed: %s", cuda_text(inst).c_str());
    }
  }
  SLIMCUDA_CUDA_TRY(cudaEventCreateWithFlags(&g->done, cudaEventDisableTiming));
  *out = std::move(g);
  return Error::Ok;
}

Error GraphRunner::replay(Captured& g, SlimTensor* const* inputs, size_t num_inputs, SlimTensor** outputs,
                          size_t num_outputs, cudaStream_t stream) noexcept {
  const StreamContext ctx = StreamContext::selected(stream, device_);
  // The static buffers are one set: the previous replay (another stream) must be done with them.
  if (g.last_stream != nullptr && g.last_stream != stream) {
    SLIMCUDA_CUDA_TRY(cudaStreamWaitEvent(stream, g.done, 0));
  }
  // Each copy is a node of the graph pointed at this call's tensors; one the graph cannot
  // take goes on the stream around the launch instead.
  for (size_t i = 0; i < num_inputs; ++i) {
    bool on_stream = false;
    SLIMCUDA_RETURN_IF_ERROR(
        point_copy(g.exec, g.copy_in[i], g.inputs[i]->data_ptr(), inputs[i]->data_ptr(), &on_stream));
    if (on_stream) SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*g.inputs[i], *inputs[i], ctx));
  }
  std::unique_ptr<SlimTensor> made[kMaxOutputs];
  bool outside[kMaxOutputs] = {};
  for (size_t i = 0; i < num_outputs; ++i) {
    SLIMCUDA_RETURN_IF_ERROR(new_like(*g.outputs[i], ctx, &made[i]));
    SLIMCUDA_RETURN_IF_ERROR(
        point_copy(g.exec, g.copy_out[i], made[i]->data_ptr(), g.outputs[i]->data_ptr(), &outside[i]));
  }
  SLIMCUDA_CUDA_TRY(cudaGraphLaunch(g.exec, stream));
  for (size_t i = 0; i < num_outputs; ++i) {
    if (outside[i]) SLIMCUDA_RETURN_IF_ERROR(copy_tensor(*made[i], *g.outputs[i], ctx));
  }
  SLIMCUDA_CUDA_TRY(cudaEventRecord(g.done, stream));
  g.last_stream = stream;
  for (size_t i = 0; i < num_outputs; ++i) outputs[i] = made[i].release();
  return Error::Ok;
}

}  // namespace slimcuda::graph
