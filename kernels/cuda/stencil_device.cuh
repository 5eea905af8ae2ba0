// Device-side building blocks of the stencil kernels: 16-byte vectors of T and their loads and
// stores, cp.async (global -> shared, bypassing registers), the split cluster barrier, mbarriers
// and the bulk tensor copy (TMA). Thin wrappers over PTX; no stencil logic. Internal to the
// stencil kernel files (kernels/cuda/stencil_*.cu): everything has internal linkage, as every
// translation unit that includes this file compiles its own kernels.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_runtime.h>

#include <cstdint>

namespace tiersim::cuda {
namespace {

// 16 bytes of T: float4 or double2.
template <class T>
struct alignas(16) V {
  static constexpr int n = 16 / sizeof(T);
  T e[n];
};

__device__ __forceinline__ V<float> ldg16(const float* p) {
  const float4 f = __ldg(reinterpret_cast<const float4*>(p));
  return {{f.x, f.y, f.z, f.w}};
}
__device__ __forceinline__ V<double> ldg16(const double* p) {
  const double2 f = __ldg(reinterpret_cast<const double2*>(p));
  return {{f.x, f.y}};
}
__device__ __forceinline__ V<float> ld16(const float* p) {
  const float4 f = *reinterpret_cast<const float4*>(p);
  return {{f.x, f.y, f.z, f.w}};
}
__device__ __forceinline__ V<double> ld16(const double* p) {
  const double2 f = *reinterpret_cast<const double2*>(p);
  return {{f.x, f.y}};
}
__device__ __forceinline__ void st16(float* p, const V<float>& v) {
  *reinterpret_cast<float4*>(p) = make_float4(v.e[0], v.e[1], v.e[2], v.e[3]);
}
__device__ __forceinline__ void st16(double* p, const V<double>& v) {
  *reinterpret_cast<double2*>(p) = make_double2(v.e[0], v.e[1]);
}
// Streaming global accesses (st.global.cs, ld.global.cs) for what a launch touches once: its
// outputs and the wave's u(t - dt). Their lines take the L2's evict-first policy, so that they
// leave before the lines of the input that the neighbouring tiles still have to read (their halo
// rows and columns). fp64 only: the one kernel they pay in is fp64 (kStreamingBuilt,
// stencil_tile.cuh).
__device__ __forceinline__ void stcs16(double* p, const V<double>& v) {
  __stcs(reinterpret_cast<double2*>(p), make_double2(v.e[0], v.e[1]));
}
__device__ __forceinline__ V<double> ldcs16(const double* p) {
  const double2 f = __ldcs(reinterpret_cast<const double2*>(p));
  return {{f.x, f.y}};
}
template <class T>
__device__ __forceinline__ V<T> zero16() {
  V<T> v;
#pragma unroll
  for (int i = 0; i < V<T>::n; ++i) v.e[i] = T(0);
  return v;
}

// cp.async of 16 bytes global -> shared; ok == false writes zeros and reads nothing.
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool ok) {
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int n = ok ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(gmem), "r"(n) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cp_async_wait_group() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Split cluster barrier (sm_90): arrive says "this block has started plane z", wait (one plane
// later) holds a block that runs ahead of the slowest block of its cluster. Pacing only, no data
// passes, hence relaxed. In a launch without clusters the block is its own cluster.
// Built for an older GPU (-DCMAKE_CUDA_ARCHITECTURES=80), these Hopper instructions trap; the
// drivers never launch them there (StencilLaunch::cc_major).
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
#define TIERSIM_SM90_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TIERSIM_SM90_ASM(...) __trap()
#endif
__device__ __forceinline__ void cluster_arrive() {
  TIERSIM_SM90_ASM("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() { TIERSIM_SM90_ASM("barrier.cluster.wait.aligned;\n" ::: "memory"); }

// Bulk tensor copy (TMA, sm_90) of one box global -> shared, completing on an mbarrier that
// counts the bytes; one thread issues it, every thread waits on the barrier's phase.
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(std::uint64_t* bar, unsigned count) {
  TIERSIM_SM90_ASM("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_init_fence() {
  TIERSIM_SM90_ASM("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(std::uint64_t* bar, unsigned bytes) {
  TIERSIM_SM90_ASM("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(bytes)
                   : "memory");
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, unsigned parity) {
  unsigned done = 1;
  do {
    TIERSIM_SM90_ASM(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void tma_load_3d(void* dst, const CUtensorMap* map, int x, int y, int z,
                                            std::uint64_t* bar) {
  TIERSIM_SM90_ASM(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(smem_addr(dst)),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(x), "r"(y), "r"(z), "r"(smem_addr(bar))
      : "memory");
}

}  // namespace
}  // namespace tiersim::cuda
