// A stencil grid split into z slabs over the ranks of a run (base/comm.hpp): which planes each
// rank holds, and the z pass of the halo fill as an exchange with the neighbouring ranks. The x
// and y passes stay local (a rank holds whole planes); the z pass sends the slab's R boundary
// planes to the neighbours' halos and receives theirs. Written once for both engines: the CPU
// engine passes its grids' planes, the CUDA engine pinned host buffers it copies the planes
// through.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/stencil_engine.hpp"

namespace tiersim {

// The slab of rank `rank` of `ranks` of the grid `global`: global planes [nz*rank/ranks,
// nz*(rank+1)/ranks) (p.nz the slab's, p.z0 its first), its neighbours (periodic: wrapping around
// the ranks, so rank 0's lower one is the last; fixed: none below rank 0 and above the last). One
// rank: the whole grid, no neighbours. Throws Error when a slab would hold fewer than R planes (a
// halo is R planes of one neighbour).
StencilProblem z_slab(const StencilProblem& global, int rank, int ranks);

// One field's planes in memory, each R whole planes (a temporal pass's T R; GridSpec::plane_start:
// x and y halos and row padding included) in one run of the `bytes` exchange_z_halos is given.
struct ZHaloPlanes {
  const void* low = nullptr;   // interior planes 0..R-1: to the rank below
  const void* high = nullptr;  // interior planes nz-R..nz-1: to the rank above
  void* low_halo = nullptr;    // halo planes -R..-1: from the rank below
  void* high_halo = nullptr;   // halo planes nz..nz+R-1: from the rank above
};

// Bytes a rank sends and receives in one z pass over `fields` grids, `bytes` per block of R planes:
// a block to each neighbour and one from it.
inline double z_exchange_bytes(const StencilProblem& p, std::size_t fields, std::size_t bytes) {
  const int neighbours = (p.rank_below >= 0) + (p.rank_above >= 0);
  return 2.0 * neighbours * double(fields) * double(bytes);
}

// The z pass of the halos of `fields` across ranks: every field's low planes go to p.rank_below
// (into its high halo) and its high planes to p.rank_above (into its low halo); the halos receive
// the neighbours'. The sides without a neighbour are left alone (the engine fills a fixed face).
// Collective between neighbours: every rank calls it with its fields in the same order, after the
// x and y passes (the planes sent carry their x and y halos). Returns the telemetry record:
// "halo_exchange_mpi", bytes sent and received, the exchange's time on the host clock.
KernelRecord exchange_z_halos(const StencilProblem& p, const std::vector<ZHaloPlanes>& fields, std::size_t bytes,
                              const std::string& strategy);

}  // namespace tiersim
