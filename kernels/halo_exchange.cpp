// The z slabs and their halo exchange (kernels/halo_exchange.hpp) over base/comm.hpp.
#include "kernels/halo_exchange.hpp"

#include <chrono>

#include "base/comm.hpp"
#include "kernels/kernel_timing.hpp"

namespace tiersim {

StencilProblem z_slab(const StencilProblem& global, int rank, int ranks) {
  StencilProblem p = global;
  p.nz_global = global.nz;
  if (ranks <= 1) return p;
  const int nz = global.nz, r = global.radius;
  // The thinnest slab holds nz / ranks planes (rounded down).
  if (const int thinnest = nz / ranks; thinnest < r)
    throw Error("grid.nz = " + std::to_string(nz) + " split over " + std::to_string(ranks) + " ranks leaves slabs of " +
                std::to_string(thinnest) + (thinnest == 1 ? " z plane" : " z planes") + ", fewer than grid.radius = " +
                std::to_string(r) + " (a halo is R planes of one neighbour): run on at most " + std::to_string(nz / r) +
                " ranks or raise grid.nz");
  const auto start = [&](int q) { return int(std::int64_t(nz) * q / ranks); };
  p.z0 = start(rank);
  p.nz = start(rank + 1) - p.z0;
  const bool periodic = global.boundary == Boundary::Periodic;
  p.rank_below = rank > 0 ? rank - 1 : periodic ? ranks - 1 : -1;
  p.rank_above = rank < ranks - 1 ? rank + 1 : periodic ? 0 : -1;
  return p;
}

KernelRecord exchange_z_halos(const StencilProblem& p, const std::vector<ZHaloPlanes>& fields, std::size_t bytes,
                              const std::string& strategy) {
  const auto t0 = std::chrono::steady_clock::now();
  // Two shifts per field, each a sendrecv every rank takes part in (a chain, or a ring when
  // periodic: no rank waits on one that waits on it). A tag per field and direction keeps them
  // apart where both neighbours are one rank (two ranks, periodic).
  constexpr int kTag = 2100;
  int f = 0;
  for (const ZHaloPlanes& z : fields) {
    comm::sendrecv(z.low, bytes, p.rank_below, z.high_halo, bytes, p.rank_above, kTag + 2 * f);
    comm::sendrecv(z.high, bytes, p.rank_above, z.low_halo, bytes, p.rank_below, kTag + 2 * f + 1);
    ++f;
  }
  KernelRecord r;
  r.kernel = "halo_exchange_mpi";
  r.step = telemetry_step();
  r.strategy = strategy;
  r.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  r.bytes_compulsory = r.bytes_modelled = z_exchange_bytes(p, fields.size(), bytes);
  r.work = r.bytes_compulsory;
  r.work_unit = "bytes";
  r.communication = true;
  return r;
}

}  // namespace tiersim
