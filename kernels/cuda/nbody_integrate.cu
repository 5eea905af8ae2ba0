// Leapfrog kick and drift per layout (one thread per body, the integrator from
// kernels/physics/gravity.hpp) and the diagnostics reduction with CUB.
#include <cuda_runtime.h>

#include <bit>
#include <cub/device/device_reduce.cuh>
#include <string>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/nbody_forces.cuh"
#include "kernels/cuda/nbody_integrate.cuh"
#include "kernels/physics/gravity.hpp"

namespace tiersim::cuda {

namespace {

constexpr int kStreamBlock = 256;

// Thread t of the launch: body lo + t, while below hi.
template <class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kStreamBlock)
    nbody_kick_kernel(const View v, const T dt, const int lo, const int hi) {
  const int i = lo + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < hi) v.set_vel(i, kick(v.vel(i), v.acc(i), dt));
}

template <class View, class T = typename View::scalar>
__global__ void __launch_bounds__(kStreamBlock)
    nbody_drift_kernel(const View v, const T dt, const int lo, const int hi) {
  const int i = lo + int(blockIdx.x * blockDim.x + threadIdx.x);
  if (i < hi) v.set_pos(i, drift(v.pos(i), v.vel(i), dt));
}

int stream_grid(int n) { return (n + kStreamBlock - 1) / kStreamBlock; }

// Per-body contributions; summed by CUB in double (a tree: rounding grows as log n, not n). The
// non-finite check rides along: the smallest index whose velocity, position or acceleration is
// not finite (kNoBody: none; indices are exact in a double).
constexpr double kNoBody = 1e308;
struct DiagSums {
  double ke, pe, px, py, pz, lx, ly, lz, m;
  double bad_v, bad_x, bad_a;
};

struct DiagSumOp {
  TIERSIM_HD DiagSums operator()(const DiagSums& a, const DiagSums& b) const {
    return {a.ke + b.ke,
            a.pe + b.pe,
            a.px + b.px,
            a.py + b.py,
            a.pz + b.pz,
            a.lx + b.lx,
            a.ly + b.ly,
            a.lz + b.lz,
            a.m + b.m,
            fmin(a.bad_v, b.bad_v),
            fmin(a.bad_x, b.bad_x),
            fmin(a.bad_a, b.bad_a)};
  }
};
constexpr DiagSums kDiagZero{0, 0, 0, 0, 0, 0, 0, 0, 0, kNoBody, kNoBody, kNoBody};

template <class View>
struct DiagOfBody {
  View v;
  const double* psi;  // each pair's potential once (launch_nbody_forces): W = G sum_i m_i psi_i
  TIERSIM_HD DiagSums operator()(int i) const {
    const auto p = v.pos(i), u = v.vel(i), a = v.acc(i);
    const double m = double(v.mass(i));
    const Vec3<double> r{double(p.x), double(p.y), double(p.z)}, w{double(u.x), double(u.y), double(u.z)};
    const Vec3<double> l = cross(r, w);
    auto bad = [i](const auto& q) { return isfinite(q.x) && isfinite(q.y) && isfinite(q.z) ? kNoBody : double(i); };
    return {0.5 * m * dot(w, w),
            m * psi[i],
            m * w.x,
            m * w.y,
            m * w.z,
            m * l.x,
            m * l.y,
            m * l.z,
            m,
            bad(u),
            bad(p),
            bad(a)};
  }
};

template <class View>
using DiagIter = thrust::transform_iterator<DiagOfBody<View>, thrust::counting_iterator<int>, DiagSums>;

// Kick and drift: each reads two groups of fields (mask `read`) and writes one (mask `written`).
template <class View>
void fill_stream_record(KernelRecord& rec, const char* kernel, int n, unsigned read, unsigned written) {
  using T = typename View::scalar;
  const double nn = n;
  rec.kernel = kernel;
  rec.bytes_compulsory = nn * double(std::popcount(read) + std::popcount(written)) * sizeof(T);
  rec.bytes_modelled = nn * (View::moved_bytes(read) + View::moved_bytes(written));
  rec.flops = 6.0 * nn;  // 3 FMA
  rec.work = nn;
  rec.work_unit = "bodies";
}

}  // namespace

template <class View>
void launch_nbody_kick(const View& v, double dt, cudaStream_t stream, KernelRecord& rec, int lo, int hi) {
  using T = typename View::scalar;
  const int count = hi > lo ? hi - lo : 0;
  if (count > 0) {
    nbody_kick_kernel<View><<<stream_grid(count), kStreamBlock, 0, stream>>>(v, T(dt), lo, hi);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_kick_kernel", "n=" + std::to_string(v.n) + " bodies " + std::to_string(lo) +
                                                       " to " + std::to_string(hi));
  }
  // reads vel and acc, writes vel
  fill_stream_record<View>(rec, "nbody_kick", count, field_mask(kVX, 3) | field_mask(kAX, 3), field_mask(kVX, 3));
}

template <class View>
void launch_nbody_drift(const View& v, double dt, cudaStream_t stream, KernelRecord& rec, int lo, int hi) {
  using T = typename View::scalar;
  const int count = hi > lo ? hi - lo : 0;
  if (count > 0) {
    nbody_drift_kernel<View><<<stream_grid(count), kStreamBlock, 0, stream>>>(v, T(dt), lo, hi);
    TIERSIM_CUDA_CHECK_LAUNCH("nbody_drift_kernel", "n=" + std::to_string(v.n) + " bodies " + std::to_string(lo) +
                                                        " to " + std::to_string(hi));
  }
  // reads pos and vel, writes pos
  fill_stream_record<View>(rec, "nbody_drift", count, field_mask(kX, 3) | field_mask(kVX, 3), field_mask(kX, 3));
}

template <class View>
std::size_t nbody_diagnostics_scratch_bytes(int count) {
  std::size_t temp = 0;
  DiagIter<View> in(thrust::counting_iterator<int>(0), DiagOfBody<View>{View{}, nullptr});
  TIERSIM_CUDA_CHECK(cub::DeviceReduce::Reduce(nullptr, temp, in, static_cast<DiagSums*>(nullptr),
                                               count > 0 ? count : 1, DiagSumOp{}, kDiagZero),
                     "sizing the diagnostics reduction, n=" + std::to_string(count));
  return align_up(sizeof(DiagSums), 256) + temp;
}

template <class View>
void launch_nbody_diagnostics(const View& v, const double* psi, void* scratch, std::size_t scratch_bytes,
                              cudaStream_t stream, KernelRecord& rec, int lo, int hi) {
  using T = typename View::scalar;
  auto* result = static_cast<DiagSums*>(scratch);
  const int count = hi > lo ? hi - lo : 0;
  if (count == 0) {
    TIERSIM_CUDA_CHECK(cudaMemcpyAsync(result, &kDiagZero, sizeof(DiagSums), cudaMemcpyHostToDevice, stream),
                       "diagnostics of no bodies");
  } else {
    void* temp = static_cast<char*>(scratch) + align_up(sizeof(DiagSums), 256);
    std::size_t temp_bytes = scratch_bytes - align_up(sizeof(DiagSums), 256);
    DiagIter<View> in(thrust::counting_iterator<int>(lo), DiagOfBody<View>{v, psi});
    TIERSIM_CUDA_CHECK(cub::DeviceReduce::Reduce(temp, temp_bytes, in, result, count, DiagSumOp{}, kDiagZero, stream),
                       "diagnostics reduction, n=" + std::to_string(count));
  }
  // Each body's position, velocity, acceleration (the non-finite check), mass and psi read once.
  // Flops per body: kinetic energy 7, potential 2, momentum 6, angular momentum 15 (a cross
  // product, 9, then m l summed, 6), mass 1.
  const double n = count;
  rec.kernel = "nbody_diagnostics";
  rec.bytes_compulsory = n * (10.0 * sizeof(T) + sizeof(double));
  rec.bytes_modelled = n * (View::moved_bytes(field_mask(kX, 10)) + sizeof(double));
  rec.flops = 31.0 * n;
  rec.work = n;
  rec.work_unit = "bodies";
}

NbodyDiagnostics fetch_nbody_diagnostics(const void* scratch, double G, cudaStream_t stream) {
  DiagSums h{};
  TIERSIM_CUDA_CHECK(cudaMemcpyAsync(&h, scratch, sizeof h, cudaMemcpyDeviceToHost, stream));
  TIERSIM_CUDA_CHECK(cudaStreamSynchronize(stream), "diagnostics reduction");
  NbodyDiagnostics out;
  out.kinetic = h.ke;
  out.potential = G * h.pe;
  out.momentum = {h.px, h.py, h.pz};
  out.angular_momentum = {h.lx, h.ly, h.lz};
  out.mass = h.m;
  auto index = [](double b) { return b == kNoBody ? std::int64_t(-1) : std::int64_t(b); };
  out.first_non_finite_velocity = index(h.bad_v);
  out.first_non_finite_position = index(h.bad_x);
  out.first_non_finite_acceleration = index(h.bad_a);
  return out;
}

#define TIERSIM_INSTANTIATE_INTEGRATE(V)                                                                              \
  template void launch_nbody_kick<V>(const V&, double, cudaStream_t, KernelRecord&, int, int);                        \
  template void launch_nbody_drift<V>(const V&, double, cudaStream_t, KernelRecord&, int, int);                       \
  template std::size_t nbody_diagnostics_scratch_bytes<V>(int);                                                       \
  template void launch_nbody_diagnostics<V>(const V&, const double*, void*, std::size_t, cudaStream_t, KernelRecord&, \
                                            int, int);
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_INTEGRATE, float)
TIERSIM_PARTICLE_VIEWS(TIERSIM_INSTANTIATE_INTEGRATE, double)
#undef TIERSIM_INSTANTIATE_INTEGRATE

}  // namespace tiersim::cuda
