// The stencil backend interface: what the stencil model (sim/) may ask of a backend. Plain C++:
// the CUDA implementation lives behind make_stencil_cuda() in kernels/cuda, so sim/ never sees
// a kernel (as kernels/nbody_engine.hpp does for N-body).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/physics/stencil.hpp"
#include "kernels/staging.hpp"
#include "layouts/grid.hpp"
#include "base/strategy.hpp"
#include "base/kernel_record.hpp"

namespace tiersim {

struct StencilProblem {
  Equation equation = Equation::Heat;
  int nx = 0, ny = 0, nz = 0;
  int radius = 1;
  double h[3] = {1, 1, 1};  // spacing per axis
  Boundary boundary = Boundary::Periodic;
  // Values fixed boundaries hold: boundary_value for field 0 (and for the wave equation's u(t - dt),
  // which is u too), boundary_value_v for Gray-Scott's V, whose reservoir state differs from U's.
  double boundary_value = 0;
  double boundary_value_v = 0;
  double diffusivity = 1;            // heat
  double speed = 1;                  // wave
  double du = 0.16, dv = 0.08, feed = 0.035, kill = 0.065;  // gray-scott
  std::int64_t points() const { return std::int64_t(nx) * ny * nz; }
  // The value field f's halo holds on fixed boundaries (fields numbered as stencil_field_count).
  double field_boundary_value(int field) const {
    return equation == Equation::GrayScott && field == 1 ? boundary_value_v : boundary_value;
  }
};

// Fields by equation: heat {0: u}; wave {0: u(t), 1: u(t - dt)}; gray-scott {0: U, 1: V}.
inline int stencil_field_count(Equation e) { return e == Equation::Heat ? 1 : 2; }

struct FieldStats {
  double sum = 0, sum_sq = 0, min = 0, max = 0;
};

// Tunables of the CUDA kernels (0 = chosen per radius and equation).
struct StencilTuning {
  int block_y = 0;      // threads per block along y (x is one warp)
  int z_chunk = 0;      // z planes one block marches through
  int prefetch = 0;     // planes loaded ahead in registers (shared tiling)
};

class StencilEngine {
 public:
  virtual ~StencilEngine() = default;
  virtual const StencilProblem& problem() const = 0;
  // Interior values, x fastest, nx*ny*nz of them.
  virtual void upload(int field, const std::vector<double>& interior) = 0;
  virtual std::vector<double> download(int field) = 0;
  // Starts copying the interior of `field` in the engine's precision (x fastest) into dst, which
  // holds points() scalars and outlives the copy; on the GPU it returns at once (the copy crosses
  // the link on a copy stream while the steps go on: kernels/staging.hpp).
  virtual std::unique_ptr<CopyInFlight> stage(int field, void* dst) = 0;
  // One time step: fill the halos (boundary condition), update every interior point.
  virtual void step(double dt) = 0;
  // Adds `value` to field 0 at interior point (i, j, k) (the wave equation's point source).
  virtual void add_point_value(int i, int j, int k, double value) = 0;
  virtual FieldStats stats(int field) = 0;
  // Leapfrog's discrete energy, conserved exactly by the scheme with periodic boundaries:
  // sum over points of 1/2 ((u - u_prev)/dt)^2 - 1/2 c^2 u * L(u_prev). Per unit cell volume.
  virtual double wave_energy(double dt) = 0;
  // Kernel records since the last call, in launch order. wait = false returns only those whose
  // device work has finished (no synchronisation: the host may run steps ahead of the GPU).
  virtual std::vector<KernelRecord> take_records(bool wait = true) = 0;
  virtual std::string strategy_name() const = 0;
};

std::unique_ptr<StencilEngine> make_stencil_cpu(const Strategy& s, const StencilProblem& p);
// Throws Error when tiersim was built without CUDA or no GPU is usable.
std::unique_ptr<StencilEngine> make_stencil_cuda(const Strategy& s, const StencilProblem& p,
                                                 const StencilTuning& t = {});

// Compulsory bytes of one update: each input field read once, each output written once.
inline double stencil_compulsory_bytes(const StencilProblem& p, std::size_t scalar_bytes) {
  const int accesses = p.equation == Equation::Heat ? 2 : p.equation == Equation::Wave ? 3 : 4;
  return double(p.points()) * accesses * double(scalar_bytes);
}
// Flops per point of one update.
inline double stencil_flops_per_point(const StencilProblem& p) {
  const double lap = laplacian_flops(p.radius);
  return p.equation == Equation::Heat ? lap + 2 : p.equation == Equation::Wave ? lap + 4 : 2 * lap + 16;
}

}  // namespace tiersim
