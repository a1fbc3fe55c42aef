// SPDX-License-Identifier: Apache-2.0
#pragma once

// The CUDA features attention_kernel_device.h uses, emulated on the host for
// attention_kernel_emulation_test: a block runs as kThreads std::threads (threadIdx and
// blockIdx thread-local), __shared__ variables are statics (blocks run one at a time),
// __syncthreads and __syncwarp are barriers, a warp shuffle goes through a per-warp buffer
// between two barriers. float16/bfloat16 are stand-ins holding a float: the emulation
// checks the kernel's logic, not the dtype conversions (those are CUDA's intrinsics).
// Include before attention_kernel_device.h. Test-only.

#include <cmath>
#include <condition_variable>
#include <mutex>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __shared__ static
#define SLIMCUDA_ATTENTION_DYNAMIC_SMEM(name) float4* name = ::slimcuda_emulation::dynamic_smem

struct float4 {
  float x, y, z, w;
};
inline float4 make_float4(float x, float y, float z, float w) { return {x, y, z, w}; }
struct __half {
  float f;
};
struct __nv_bfloat16 {
  float f;
};
inline float __half2float(__half h) { return h.f; }
inline float __bfloat162float(__nv_bfloat16 h) { return h.f; }
inline __half __float2half_rn(float f) { return {f}; }
inline __nv_bfloat16 __float2bfloat16_rn(float f) { return {f}; }

namespace slimcuda_emulation {

/// A reusable barrier for a fixed number of threads.
class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void wait() {
    std::unique_lock<std::mutex> lock(mu_);
    const unsigned generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
      return;
    }
    cv_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  const int count_;
  int arrived_ = 0;
  unsigned generation_ = 0;
};

struct Dim {
  unsigned x = 0, y = 0, z = 0;
};

inline thread_local Dim thread_index, block_index;
inline float4* dynamic_smem = nullptr;
inline Barrier* block_barrier = nullptr;
inline Barrier* warp_barriers[32] = {};
inline float shuffle_slots[32][32];

}  // namespace slimcuda_emulation

#define threadIdx ::slimcuda_emulation::thread_index
#define blockIdx ::slimcuda_emulation::block_index

inline void __syncthreads() { slimcuda_emulation::block_barrier->wait(); }
inline void __syncwarp() { slimcuda_emulation::warp_barriers[threadIdx.x / 32]->wait(); }
inline float __shfl_xor_sync(unsigned /*mask*/, float x, int lane_mask) {
  const unsigned w = threadIdx.x / 32, lane = threadIdx.x % 32;
  slimcuda_emulation::Barrier& b = *slimcuda_emulation::warp_barriers[w];
  b.wait();  // every lane has read the previous shuffle's slots
  slimcuda_emulation::shuffle_slots[w][lane] = x;
  b.wait();
  return slimcuda_emulation::shuffle_slots[w][lane ^ static_cast<unsigned>(lane_mask)];
}
