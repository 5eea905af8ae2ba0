// The z slabs a stencil grid is split into over the ranks of a run (kernels/halo_exchange.hpp):
// which planes each rank holds, its neighbours, and the refusal of slabs thinner than a halo. The
// exchange itself needs several processes: tests/integration/test_mpi_stencil.sh.
#include <gtest/gtest.h>

#include <string>

#include "kernels/halo_exchange.hpp"

using namespace tiersim;

namespace {

StencilProblem grid(int nz, int radius, Boundary bc) {
  StencilProblem p;
  p.nx = 21, p.ny = 19, p.nz = nz, p.radius = radius, p.boundary = bc;
  return p;
}

}  // namespace

TEST(StencilSlabs, OneRankHoldsTheWholeGridWithoutNeighbours) {
  for (Boundary bc : {Boundary::Periodic, Boundary::Fixed}) {
    const StencilProblem s = z_slab(grid(23, 4, bc), 0, 1);
    EXPECT_EQ(s.nz, 23);
    EXPECT_EQ(s.nz_global, 23);
    EXPECT_EQ(s.z0, 0);
    EXPECT_FALSE(s.z_split());
    EXPECT_EQ(s.local_z_sides(), 3);
  }
}

TEST(StencilSlabs, SlabsCoverTheGridInRankOrder) {
  for (Boundary bc : {Boundary::Periodic, Boundary::Fixed})
    for (int ranks = 2; ranks <= 5; ++ranks) {
      int next = 0;
      for (int r = 0; r < ranks; ++r) {
        const StencilProblem s = z_slab(grid(23, 4, bc), r, ranks);
        EXPECT_EQ(s.z0, next) << ranks << " ranks, rank " << r;
        EXPECT_EQ(s.z0, 23 * r / ranks);
        EXPECT_EQ(s.nz_global, 23);
        EXPECT_EQ(s.nx, 21);
        EXPECT_EQ(s.ny, 19);
        EXPECT_TRUE(s.z_split());
        next = s.z0 + s.nz;
        if (bc == Boundary::Periodic) {
          EXPECT_EQ(s.rank_below, (r + ranks - 1) % ranks);
          EXPECT_EQ(s.rank_above, (r + 1) % ranks);
          EXPECT_EQ(s.local_z_sides(), 0);
        } else {
          EXPECT_EQ(s.rank_below, r > 0 ? r - 1 : -1);
          EXPECT_EQ(s.rank_above, r < ranks - 1 ? r + 1 : -1);
          EXPECT_EQ(s.local_z_sides(), (r == 0 ? 1 : 0) | (r == ranks - 1 ? 2 : 0));
        }
      }
      EXPECT_EQ(next, 23) << ranks << " ranks";
    }
}

TEST(StencilSlabs, SlabsThinnerThanTheRadiusAreRefused) {
  // 9 planes over 3 ranks: 3 each, enough for R = 3, not for R = 4.
  EXPECT_NO_THROW(z_slab(grid(9, 3, Boundary::Fixed), 0, 3));
  try {
    z_slab(grid(9, 4, Boundary::Periodic), 1, 3);
    FAIL() << "a slab of 3 planes with R = 4 was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "grid.nz = 9 split over 3 ranks leaves slabs of 3 z planes, fewer than grid.radius = 4 (a halo is R "
              "planes of one neighbour): run on at most 2 ranks or raise grid.nz");
  }
}

TEST(StencilSlabs, HaloPointsCountTheZFacesFilledHere) {
  const std::int64_t plane = (21 + 2 * 2) * (19 + 2 * 2);
  EXPECT_EQ(halo_points(21, 19, 7, 2), plane * (7 + 4) - 21 * 19 * 7);
  EXPECT_EQ(halo_points(21, 19, 7, 2, 0), plane * 7 - 21 * 19 * 7);
  EXPECT_EQ(halo_points(21, 19, 7, 2, 1), plane * 9 - 21 * 19 * 7);
  EXPECT_EQ(halo_points(21, 19, 7, 2, 2), plane * 9 - 21 * 19 * 7);
}
