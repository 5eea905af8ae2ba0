// The stencil backend interface: what the stencil model (sim/) may ask of a backend. Plain C++:
// the CUDA implementation lives behind make_stencil_cuda() in kernels/cuda, so sim/ never sees
// a kernel (as kernels/nbody_engine.hpp does for N-body).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/physics/equations.hpp"
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
  // grid.boundary_value: what fixed boundaries hold, for the equations whose fields have no
  // boundary keys of their own (field_boundary_value).
  double boundary_value = 0;
  // Every listed equation's constants (Constants{} unless set); the selected equation's are used.
  StencilEquations::ConstantsTuple all_constants;

  template <class Eq>
  typename Eq::Constants& constants() {
    return std::get<typename Eq::Constants>(all_constants);
  }
  template <class Eq>
  const typename Eq::Constants& constants() const {
    return std::get<typename Eq::Constants>(all_constants);
  }
  // The z slab this rank holds when the grid is split over the ranks of a run (base/comm.hpp,
  // z_slab in kernels/halo_exchange.hpp): global planes [z0, z0 + nz) of nz_global, and the ranks
  // holding the planes just below and above it (-1: none, a face of the grid). Not split (one
  // rank): z0 = 0, no neighbours, and the halo's z pass is local; nz_global is nz then (or 0 in a
  // problem made without z_slab).
  int nz_global = 0;
  int z0 = 0;
  int rank_below = -1, rank_above = -1;
  bool z_split() const { return rank_below >= 0 || rank_above >= 0; }
  // The z faces of the halo an engine fills itself (bit 0: below plane 0, bit 1: above plane
  // nz - 1; halo_box's sides): both when not split; when split, the faces without a neighbour (a
  // fixed boundary's bottom and top), the others come from exchange_z_halos.
  int local_z_sides() const { return (rank_below < 0 ? 1 : 0) | (rank_above < 0 ? 2 : 0); }

  std::int64_t points() const { return std::int64_t(nx) * ny * nz; }
  // The value the halo of state field f holds on fixed boundaries.
  double field_boundary_value(int field) const {
    return with_equation(equation, [&](auto eq) {
      using Eq = decltype(eq);
      return Eq::fixed_boundary_value(constants<Eq>(), field, boundary_value);
    });
  }
};

// Arrays of the state by equation (Eq::kStateNames): heat {0: u}; wave {0: u(t), 1: u(t - dt)};
// gray-scott {0: U, 1: V}; ...
inline int stencil_field_count(Equation e) {
  return with_equation(e, [](auto eq) { return int(decltype(eq)::kStateNames.size()); });
}

// Tunables of the CUDA kernels (0 = chosen per radius and equation).
struct StencilTuning {
  int block_y = 0;   // threads per block along y (x is one warp)
  int z_chunk = 0;   // z planes one block marches through
  int prefetch = 0;  // planes loaded ahead in registers (shared tiling)
  // --tiling temporal: time steps one pass fuses (0: chosen per equation, radius, grid and device).
  int temporal_steps = 0;
  // Update the interior (planes R..nz-R-1) and the z faces (R planes at each end) in separate
  // launches, as on a grid split over ranks (where the halo exchange runs beside the interior),
  // also on one rank: what the GPU tests check the split launches with.
  bool split_z = false;
};

class StencilEngine {
 public:
  virtual ~StencilEngine() = default;
  virtual const StencilProblem& problem() const = 0;
  // Interior values, x fastest, n = nx*ny*nz of them.
  virtual void upload(int field, const double* interior, std::size_t n) = 0;
  template <class A>
  void upload(int field, const std::vector<double, A>& interior) {
    upload(field, interior.data(), interior.size());
  }
  virtual std::vector<double> download(int field) = 0;
  // Starts copying the interior of `field` in the engine's precision (x fastest) into dst, which
  // holds points() scalars and outlives the copy; on the GPU it returns at once (the copy crosses
  // the link on a copy stream while the steps go on: kernels/staging.hpp).
  virtual std::unique_ptr<CopyInFlight> stage(int field, void* dst) = 0;
  // One time step: fill the halos (boundary condition), update every interior point.
  virtual void step(double dt) = 0;
  // Advances by 1..max_steps time steps and returns how many: one, unless the strategy fuses
  // steps into one pass through memory (--tiling temporal), which takes as many as it fuses.
  virtual int advance(double dt, int max_steps) {
    (void)max_steps;
    step(dt);
    return 1;
  }
  // The steps a temporal pass fuses when the run allows as many (--tiling temporal); 0 where the
  // engine runs the single-step kernels.
  virtual int fused_steps() const { return 0; }
  // Adds `value` to field 0 at interior point (i, j, k) (the wave equation's point source).
  virtual void add_point_value(int i, int j, int k, double value) = 0;
  // Statistics of state field `field` in one pass over it (kernels/physics/equation.hpp), where
  // it lies: a few scalars come back, never the field.
  virtual FieldStats stats(int field) = 0;
  // The wave equation's leapfrog discrete energy, conserved exactly by the scheme with periodic
  // boundaries: sum over points of 1/2 ((u - u_prev)/dt)^2 - 1/2 c^2 u * L(u_prev). Per unit cell
  // volume; 0 for the other equations.
  virtual double wave_energy(double dt) = 0;
  // The reductions of one moment: stats() of every state field and, where asked, wave_energy().
  struct Reductions {
    std::vector<FieldStats> stats;
    double wave_energy = 0;
  };
  // Diagnostics behind the steps: queues the reductions of the current state after the steps
  // queued so far and returns at once; the function returned waits for them alone (steps queued
  // later run on) and gives their values. One queued at a time: call it before queueing again.
  // This default computes them now (the CPU engine: its steps are not queued).
  virtual std::function<Reductions()> queue_reductions(bool energy, double dt) {
    Reductions r;
    for (int f = 0; f < stencil_field_count(problem().equation); ++f) r.stats.push_back(stats(f));
    if (energy) r.wave_energy = wave_energy(dt);
    return [r = std::move(r)] { return r; };
  }
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
  const int accesses = with_equation(p.equation, [](auto eq) { return decltype(eq)::kFieldAccessesPerPoint; });
  return double(p.points()) * accesses * double(scalar_bytes);
}
// Flops per point of one update.
inline double stencil_flops_per_point(const StencilProblem& p) {
  return with_equation(p.equation, [&](auto eq) { return decltype(eq)::flops_per_point(p.radius); });
}
// The equation's explicit stability limit on this grid, and the rule as messages print it.
inline double stencil_dt_limit(const StencilProblem& p) {
  const double rho = laplacian_spectral_radius(p.radius, p.h[0], p.h[1], p.h[2]);
  return with_equation(p.equation, [&](auto eq) {
    using Eq = decltype(eq);
    return Eq::dt_limit(p.constants<Eq>(), rho);
  });
}
inline std::string stencil_stability_rule(const StencilProblem& p) {
  return with_equation(p.equation, [&](auto eq) {
    using Eq = decltype(eq);
    return Eq::stability_rule(p.constants<Eq>());
  });
}

}  // namespace tiersim
