// CUDA stencil kernels against the CPU reference (float64): every equation x tiling x
// coefficient space x radius, on random fields of odd sizes (partial tiles in x, y and z),
// outputs poisoned with NaN first; multi-step runs against the CPU backend; reductions, with the
// non-finite values they count.
// Skipped, with the reason, where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"
#include "layouts/grid.hpp"
#include "gpu_test.hpp"

using namespace tiersim;
using namespace tiersim::test;

namespace {

double rel_error(const std::vector<double>& got, const std::vector<double>& ref, std::size_t* nan_count) {
  double e2 = 0, r2 = 0;
  *nan_count = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) ++*nan_count;
    e2 += (got[i] - ref[i]) * (got[i] - ref[i]), r2 += ref[i] * ref[i];
  }
  return std::sqrt(e2 / r2);
}

StencilProblem problem(Equation eq, int R, int nx, int ny, int nz) {
  StencilProblem p;
  p.equation = eq;
  p.nx = nx, p.ny = ny, p.nz = nz;
  p.radius = R;
  p.h[0] = 1.0 / nx, p.h[1] = 1.1 / ny, p.h[2] = 0.9 / nz;  // different spacing per axis
  if (with_equation(eq, [](auto e) { return decltype(e)::kGridUnits; })) p.h[0] = p.h[1] = p.h[2] = 1.0;
  return p;
}

double stable_dt(const StencilProblem& p, double fraction) { return fraction * stencil_dt_limit(p); }

Strategy strategy(Backend b, Precision pr, Tiling t, CoeffSpace c) {
  Strategy s;
  s.backend = b, s.precision = pr, s.tiling = t, s.coeffs = c;
  return s;
}

// Uploads the same random fields to both engines; poisons the GPU's output buffers first by
// stepping once on NaN fields (after the swap, the next output buffer holds NaN everywhere).
void init_pair(StencilEngine& gpu, StencilEngine& cpu, const StencilProblem& p, unsigned seed, double dt) {
  const int nf = stencil_field_count(p.equation);
  const std::vector<double> nan(std::size_t(p.points()), std::numeric_limits<double>::quiet_NaN());
  for (int f = 0; f < nf; ++f) gpu.upload(f, nan);
  gpu.step(dt);
  for (int f = 0; f < nf; ++f) {
    const auto v = random_initial_field(p, f, seed);
    gpu.upload(f, v);
    cpu.upload(f, v);
  }
}

using Param = std::tuple<Equation, Tiling, CoeffSpace, int>;

class StencilGpuVsCpu : public ::testing::TestWithParam<Param> {};

TEST_P(StencilGpuVsCpu, OneStepOnOddSizesMatchesTheFloat64Reference) {
  SKIP_WITHOUT_GPU();
  const auto [eq, tiling, coeffs, R] = GetParam();
  for (const auto& dims : {std::vector<int>{37, 50, 29}, std::vector<int>{130, 19, 11}}) {
    const StencilProblem p = problem(eq, R, dims[0], dims[1], dims[2]);
    auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, tiling, coeffs), p);
    auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64, tiling, coeffs), p);
    const double dt = stable_dt(p, 0.5);
    init_pair(*gpu, *cpu, p, 11 + R, dt);
    const auto before = gpu->download(0);
    gpu->step(dt);
    cpu->step(dt);
    for (int f = 0; f < stencil_field_count(eq); ++f) {
      const auto got = gpu->download(f), ref = cpu->download(f);
      std::size_t nans = 0;
      const double err = rel_error(got, ref, &nans);
      EXPECT_EQ(nans, 0u) << "points never written (or NaN read), field " << f;
      EXPECT_LT(err, 1e-5) << "field " << f << " " << dims[0] << "x" << dims[1] << "x" << dims[2];
    }
    std::size_t nans = 0;
    EXPECT_GT(rel_error(before, cpu->download(0), &nans), 1e-4) << "the step must change the field";
    const auto recs = gpu->take_records();
    ASSERT_FALSE(recs.empty());
    EXPECT_GT(recs.back().ms, 0.0);
    EXPECT_GT(recs.back().bytes_modelled, 0.0);
  }
}

std::string param_name(const ::testing::TestParamInfo<Param>& i) {
  const auto [eq, tiling, coeffs, R] = i.param;
  return std::string(kernel_tag(eq)) + "_" + name(tiling) + "_" + name(coeffs) + "_r" + std::to_string(R);
}

INSTANTIATE_TEST_SUITE_P(AllVariants, StencilGpuVsCpu,
                         ::testing::Combine(::testing::ValuesIn(all_equations()),
                                            ::testing::Values(Tiling::None, Tiling::Shared),
                                            ::testing::Values(CoeffSpace::Constant, CoeffSpace::Global),
                                            ::testing::Values(1, 2, 3, 4)),
                         param_name);

TEST(StencilGpu, Fp64VariantsMatchTheReference) {
  SKIP_WITHOUT_GPU();
  for (Tiling t : {Tiling::None, Tiling::Shared})
    for (int R = 1; R <= 4; ++R) {
      const StencilProblem p = problem(Equation::Heat, R, 37, 50, 29);
      auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp64, t, CoeffSpace::Constant), p);
      auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64, t, CoeffSpace::Constant), p);
      const double dt = stable_dt(p, 0.5);
      init_pair(*gpu, *cpu, p, 5, dt);
      gpu->step(dt);
      cpu->step(dt);
      std::size_t nans = 0;
      EXPECT_LT(rel_error(gpu->download(0), cpu->download(0), &nans), 1e-12) << name(t) << " R=" << R;
      EXPECT_EQ(nans, 0u);
    }
}

TEST(StencilGpu, TilingShapesAllMatch) {
  SKIP_WITHOUT_GPU();
  for (int by : {8, 16})
    for (int pf : {2, 4})
      for (int R : {1, 4}) {
        const StencilProblem p = problem(Equation::Heat, R, 200, 45, 70);
        StencilTuning t;
        t.block_y = by, t.prefetch = pf, t.z_chunk = 16;
        auto gpu =
            make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, Tiling::Shared, CoeffSpace::Global), p, t);
        auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64, Tiling::Shared, CoeffSpace::Global), p);
        const double dt = stable_dt(p, 0.5);
        init_pair(*gpu, *cpu, p, 3, dt);
        gpu->step(dt);
        cpu->step(dt);
        std::size_t nans = 0;
        EXPECT_LT(rel_error(gpu->download(0), cpu->download(0), &nans), 1e-5)
            << "by=" << by << " pf=" << pf << " R=" << R;
        EXPECT_EQ(nans, 0u);
      }
}

// Grids whose tiles divide evenly (256 x 128 in x, y): the ring kernels then run in clusters of
// tiles paced plane by plane where the device can place them (the odd sizes above never do),
// several z chunks, both coefficient spaces, three steps (the ping-pong buffers swap).
class StencilGpuWholeTiles : public ::testing::TestWithParam<int> {};

TEST_P(StencilGpuWholeTiles, HeatMatchesTheReference) {
  SKIP_WITHOUT_GPU();
  const int R = GetParam();
  for (CoeffSpace c : {CoeffSpace::Constant, CoeffSpace::Global}) {
    const StencilProblem p = problem(Equation::Heat, R, 256, 128, 72);
    auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, Tiling::Shared, c), p);
    auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64, Tiling::Shared, c), p);
    const double dt = stable_dt(p, 0.5);
    init_pair(*gpu, *cpu, p, 40 + R, dt);
    for (int s = 0; s < 3; ++s) gpu->step(dt), cpu->step(dt);
    std::size_t nans = 0;
    const auto recs = gpu->take_records();
    ASSERT_FALSE(recs.empty());
    const std::string kernel = recs.back().kernel;
    EXPECT_LT(rel_error(gpu->download(0), cpu->download(0), &nans), 1e-5) << kernel << " " << name(c);
    EXPECT_EQ(nans, 0u) << kernel;
    // The defaults this test exists for, on Hopper (unless a shape is forced for a sweep).
    if (query_device().cc_major >= 9 && !std::getenv("TIERSIM_STENCIL_SHAPE")) {
      if (R >= 2) {
        EXPECT_NE(kernel.find("_c2x1"), std::string::npos) << kernel << ": not in paced clusters";
      }
      if (R == 4) {
        EXPECT_NE(kernel.find("_tma_"), std::string::npos) << kernel << ": not the bulk tensor copy ring";
      }
    }
  }
}

// Three tiles across (384 points): the pairs of tiles across do not divide the grid, so the ring
// paces pairs down instead (1 x 2), with the same result.
TEST(StencilGpu, PacedClustersTurnDownWhereTheTilesAcrossAreOdd) {
  SKIP_WITHOUT_GPU();
  const StencilProblem p = problem(Equation::Heat, 2, 384, 128, 40);
  auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, Tiling::Shared, CoeffSpace::Constant), p);
  auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64, Tiling::Shared, CoeffSpace::Constant), p);
  const double dt = stable_dt(p, 0.5);
  init_pair(*gpu, *cpu, p, 77, dt);
  for (int s = 0; s < 3; ++s) gpu->step(dt), cpu->step(dt);
  std::size_t nans = 0;
  const auto recs = gpu->take_records();
  ASSERT_FALSE(recs.empty());
  const std::string kernel = recs.back().kernel;
  EXPECT_LT(rel_error(gpu->download(0), cpu->download(0), &nans), 1e-5) << kernel;
  EXPECT_EQ(nans, 0u) << kernel;
  if (query_device().cc_major >= 9 && !std::getenv("TIERSIM_STENCIL_SHAPE")) {
    EXPECT_NE(kernel.find("_c1x2"), std::string::npos) << kernel << ": not paced down";
  }
}

INSTANTIATE_TEST_SUITE_P(Radii, StencilGpuWholeTiles, ::testing::Values(1, 2, 3, 4),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return std::string("r").append(std::to_string(i.param));
                         });

// Many steps: the CUDA backend follows the CPU backend (same precision), periodic and fixed (Gray-Scott's
// fixed U and V halos with different values), every kernel family (heat R = 1: register
// prefetch; R = 2: ring; R = 4: tensor-copy ring; the wave and Gray-Scott: tensor-copy ring and
// prefetch; fp64), periodic x halos written by the updates themselves or by the fill (--tiling
// none); the wave's point source sits inside once and on an edge once (its halo images get the
// new value).
struct MultiStepRun {
  Equation eq;
  int R, steps;
  Boundary bc;
  Precision pr = Precision::Fp32;
  int nz = 33, nx = 45, ny = 38;
  StencilTuning tuning = {};
};

void expect_like_the_cpu_backend(const MultiStepRun& r) {
  StencilProblem p = problem(r.eq, r.R, r.nx, r.ny, r.nz);
  p.boundary = r.bc;
  p.boundary_value = 0.7;
  // Gray-Scott's U and V: halo values of their own (one value for both would pass unnoticed).
  p.constants<equations::GrayScott>().boundary_u = 0.7, p.constants<equations::GrayScott>().boundary_v = 0.2;
  for (Tiling t : {Tiling::None, Tiling::Shared}) {
    auto gpu = make_stencil_cuda(strategy(Backend::Cuda, r.pr, t, CoeffSpace::Constant), p, r.tuning);
    auto cpu = make_stencil_cpu(strategy(Backend::Cpu, r.pr, t, CoeffSpace::Constant), p);
    const double dt = stable_dt(p, 0.6);
    init_pair(*gpu, *cpu, p, 21, dt);
    (void)gpu->take_records();  // the first step's: its launch tells the engine whether the kernel wraps
    for (int s = 0; s < r.steps; ++s) {
      gpu->step(dt), cpu->step(dt);
      const int k = std::min(7, r.nz - 1);
      if (r.eq == Equation::Wave && s == 3) gpu->add_point_value(5, 6, k, 0.5), cpu->add_point_value(5, 6, k, 0.5);
      if (r.eq == Equation::Wave && s == 5)
        gpu->add_point_value(0, r.ny - 1, k, 0.5), cpu->add_point_value(0, r.ny - 1, k, 0.5);
    }
    if (t == Tiling::Shared && r.bc == Boundary::Periodic) {
      // Wrapped reads (StencilLaunch::wraps): the fill writes the x and y faces of the interior
      // planes and no z halo plane, but for the kernel at the edge of its registers, built
      // without (the wave fp64 R = 4).
      const double fields = r.eq == Equation::GrayScott ? 2 : 1, R2 = 2.0 * r.R;
      const double faces = fields * ((r.nx + R2) * (r.ny + R2) - double(r.nx) * r.ny) * r.nz;
      std::vector<KernelRecord> fills;
      std::string update;
      for (const KernelRecord& k : gpu->take_records())
        if (k.kernel.find("halo") != std::string::npos)
          fills.push_back(k);
        else if (k.kernel.find("source") == std::string::npos)
          update = k.kernel;
      const bool wave64r4 = r.eq == Equation::Wave && r.pr == Precision::Fp64 && r.R == 4;
      const bool wraps = !wave64r4;
      // The bulk-copy ring reads the x ends wrapped too (StencilLaunch::xwraps; not the wave's at
      // R = 4 nor in fp64 at R = 3, nor Gray-Scott's at R = 4) where rows are whole vectors of at
      // least its x halo: the fill then writes the y faces alone, and nothing where the ring reads
      // the y ends wrapped as well (heat's shapes, columns of whole threads' rows: 4 here; not heat
      // fp64 at R = 4 where the memory is deep, whose ring of P = 3 leaves no room for the row blocks).
      const int vw = r.pr == Precision::Fp64 ? 2 : 4, xv = (r.R + vw - 1) / vw * vw;
      const bool not_built = (r.eq == Equation::Wave && (r.R == 4 || (r.R == 3 && r.pr == Precision::Fp64))) ||
                             (r.eq == Equation::GrayScott && r.R == 4);
      const bool xwraps = update.find("_tma_") != std::string::npos && !not_built && r.nx % vw == 0 && r.nx >= xv;
      const double y_faces = fields * (r.nx + R2) * R2 * r.nz;
      // The register-prefetch kernels ("_shared_r<R>_by<BY>..._ry<RY>") read the y ends wrapped
      // where the rows are whole tiles of BY RY; where they also write their rows' x halos (rows
      // of whole 32-byte sectors with room for one more), only the first step after the upload
      // fills (the x halos the upload zeroed), and after it the fill writes at most the z planes
      // (none where the kernel wraps them).
      const auto number_after = [&](const char* key, int otherwise) {
        const std::size_t at = update.find(key);
        return at == std::string::npos ? otherwise : std::atoi(update.c_str() + at + std::strlen(key));
      };
      const bool prefetch = update.find("_shared_r") != std::string::npos;
      const int tile_rows = number_after("_by", 1) * number_after("_ry", 1);
      const int sector = r.pr == Precision::Fp64 ? 4 : 8;
      const auto room = [&](auto zero) {  // a row's points from interior x = 0 to its end
        const auto g = GridSpec<decltype(zero)>::make(r.nx, r.ny, r.nz, r.R);
        return int(g.pitch - g.xoff);
      };
      const int row_room = r.pr == Precision::Fp64 ? room(0.0) : room(0.0f);
      const bool images = r.nx % sector == 0 && r.nx + sector <= row_room;
      const bool yreads = prefetch && r.ny % tile_rows == 0 && images;
      const double z_planes = fields * (r.nx + R2) * (r.ny + R2) * R2;
      if (yreads) {
        ASSERT_FALSE(fills.empty()) << update << ": no fill after the upload";
        EXPECT_EQ(fills.size(), wraps ? 1u : std::size_t(r.steps)) << update;
        fills.erase(fills.begin());
      }
      const bool ring_yreads = xwraps && r.eq == Equation::Heat && r.ny % 4 == 0 &&
                               !(r.pr == Precision::Fp64 && r.R == 4 && deep_memory(query_device().l2_bytes));
      if (ring_yreads || (yreads && wraps)) {
        EXPECT_TRUE(fills.empty()) << update << ": a fill ran";
      } else if (!xwraps && !yreads) {
        EXPECT_FALSE(fills.empty()) << update;
      }
      for (const KernelRecord& k : fills) {
        if (yreads)
          EXPECT_LE(k.work, z_planes) << update << ": the fill wrote x or y faces at step " << k.step;
        else if (xwraps)
          EXPECT_LE(k.work, y_faces) << update << ": the fill wrote x faces or z halo planes at step " << k.step;
        else if (wraps)
          EXPECT_LE(k.work, faces) << update << ": the fill wrote z halo planes at step " << k.step;
        else
          EXPECT_GT(k.work, faces) << update << ": the fill wrote no z halo plane at step " << k.step;
      }
    }
    for (int f = 0; f < stencil_field_count(r.eq); ++f) {
      std::size_t nans = 0;
      EXPECT_LT(rel_error(gpu->download(f), cpu->download(f), &nans), 1e-5)
          << name(r.eq) << " R=" << r.R << " " << name(r.pr) << " " << r.nx << "x" << r.ny << "x" << r.nz << " "
          << name(t) << (r.tuning.block_y ? " cp.async ring" : "") << " field " << f;
      EXPECT_EQ(nans, 0u);
      const FieldStats g = gpu->stats(f), c = cpu->stats(f);
      EXPECT_NEAR(g.sum / c.sum, 1.0, 1e-5);
      EXPECT_NEAR(g.min, c.min, 1e-5 * std::fabs(c.min) + 1e-6);
      EXPECT_NEAR(g.max, c.max, 1e-5 * std::fabs(c.max) + 1e-6);
    }
    if (r.eq == Equation::Wave) {
      EXPECT_NEAR(gpu->wave_energy(dt) / cpu->wave_energy(dt), 1.0, 1e-4);
    }
  }
}

TEST(StencilGpu, MultiStepRunMatchesTheCpuBackend) {
  SKIP_WITHOUT_GPU();
  using Run = MultiStepRun;
  for (const Run& r :
       {Run{Equation::Wave, 4, 60, Boundary::Periodic}, Run{Equation::Wave, 1, 40, Boundary::Fixed},
        Run{Equation::Heat, 2, 60, Boundary::Fixed}, Run{Equation::GrayScott, 1, 100, Boundary::Periodic},
        Run{Equation::GrayScott, 2, 100, Boundary::Fixed}, Run{Equation::Heat, 1, 40, Boundary::Periodic},
        Run{Equation::Heat, 2, 40, Boundary::Periodic}, Run{Equation::Heat, 4, 40, Boundary::Periodic},
        Run{Equation::Wave, 2, 40, Boundary::Periodic}, Run{Equation::AllenCahn, 4, 60, Boundary::Periodic},
        Run{Equation::AllenCahn, 1, 100, Boundary::Fixed}, Run{Equation::GrayScott, 3, 60, Boundary::Periodic},
        Run{Equation::GrayScott, 4, 60, Boundary::Periodic}, Run{Equation::Wave, 3, 40, Boundary::Periodic},
        // fp64, and z extents of fewer than 2R planes (a plane is the image of planes at both ends).
        Run{Equation::Heat, 3, 40, Boundary::Periodic, Precision::Fp64},
        Run{Equation::Wave, 4, 40, Boundary::Periodic, Precision::Fp64},
        // Heat fp64 at R = 1 on whole tiles (the H200's bulk-copy ring in paced pairs; the register
        // prefetch elsewhere), both boundaries.
        Run{Equation::Heat, 1, 60, Boundary::Periodic, Precision::Fp64, 40, 128, 64},
        Run{Equation::Heat, 1, 60, Boundary::Fixed, Precision::Fp64, 40, 128, 64},
        Run{Equation::Heat, 4, 20, Boundary::Periodic, Precision::Fp32, 5},
        Run{Equation::Wave, 1, 20, Boundary::Periodic, Precision::Fp64, 1},
        // Rows of whole 32-byte sectors: the updates write a whole sector of x halo at each end.
        Run{Equation::Wave, 2, 30, Boundary::Periodic, Precision::Fp64, 33, 40},
        Run{Equation::GrayScott, 2, 40, Boundary::Periodic, Precision::Fp32, 33, 48},
        Run{Equation::Heat, 3, 30, Boundary::Periodic, Precision::Fp32, 9, 8}})
    expect_like_the_cpu_backend(r);
}

// Each engine sets its kernels up on a thread of its own from its constructor (lazy module
// loading off the first step). Engines made while another one steps, of every tiling and
// precision, and dropped before their first upload or step (the destructor waits for that
// thread), leave the stepping engine's results those of the CPU backend.
TEST(StencilGpu, EnginesPreparedBesideARunningOneLeaveItsResults) {
  SKIP_WITHOUT_GPU();
  StencilProblem p = problem(Equation::Heat, 2, 45, 38, 33);
  p.boundary = Boundary::Periodic;
  auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, Tiling::Shared, CoeffSpace::Constant), p);
  auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp32, Tiling::Shared, CoeffSpace::Constant), p);
  const double dt = stable_dt(p, 0.6);
  init_pair(*gpu, *cpu, p, 5, dt);
  int made = 0;
  for (Equation eq : {Equation::Heat, Equation::Wave, Equation::GrayScott})
    for (Tiling t : {Tiling::None, Tiling::Shared, Tiling::Temporal})
      for (Precision pr : {Precision::Fp32, Precision::Fp64}) {
        StencilProblem q = problem(eq, 1, 40, 36, 20);
        q.boundary = Boundary::Periodic;
        auto other = make_stencil_cuda(strategy(Backend::Cuda, pr, t, CoeffSpace::Constant), q);
        gpu->step(dt), cpu->step(dt);
        ++made;
      }
  ASSERT_EQ(made, 18);
  std::size_t nans = 0;
  EXPECT_LT(rel_error(gpu->download(0), cpu->download(0), &nans), 1e-5);
  EXPECT_EQ(nans, 0u);
}

// Periodic grids not split in z: the shared kernels read the planes beyond the z ends from the
// other end (StencilLaunch::wraps), and the fill never writes the z halo planes (they hold the
// zeros of the upload: a kernel that read them would be far off). z extents of R, 2R and more
// (a plane read wrapped from both ends), every family (register prefetch, tensor-copy ring, the
// cp.async ring of --block-y / --prefetch), rows of whole sectors or not (the x faces by the
// updates or by the fill), fixed boundaries beside them.
TEST(StencilGpu, WrappedPeriodicReadsMatchTheCpuBackend) {
  SKIP_WITHOUT_GPU();
  using Run = MultiStepRun;
  StencilTuning ring;  // the cp.async ring of 8 warps, 2 planes ahead
  ring.block_y = 8, ring.prefetch = 2;
  for (const Run& r : {Run{Equation::Heat, 1, 40, Boundary::Periodic, Precision::Fp32, 33, 45, 64},
                       Run{Equation::Heat, 2, 40, Boundary::Periodic, Precision::Fp32, 4, 40, 32},
                       Run{Equation::Heat, 4, 30, Boundary::Periodic, Precision::Fp32, 4, 40, 24},
                       Run{Equation::Wave, 3, 30, Boundary::Periodic, Precision::Fp32, 3, 45, 40},
                       Run{Equation::Heat, 4, 30, Boundary::Periodic, Precision::Fp32, 9, 64, 64},
                       Run{Equation::Heat, 3, 30, Boundary::Periodic, Precision::Fp64, 17, 40, 64},
                       Run{Equation::Heat, 1, 30, Boundary::Periodic, Precision::Fp64, 2, 40, 64},
                       Run{Equation::Wave, 4, 40, Boundary::Periodic, Precision::Fp32, 13, 48, 64},
                       Run{Equation::Wave, 4, 30, Boundary::Periodic, Precision::Fp64, 11, 40, 32},
                       Run{Equation::Wave, 1, 30, Boundary::Periodic, Precision::Fp64, 7, 45, 64},
                       Run{Equation::GrayScott, 1, 60, Boundary::Periodic, Precision::Fp32, 21, 48, 64},
                       Run{Equation::GrayScott, 3, 40, Boundary::Periodic, Precision::Fp32, 9, 40, 32},
                       Run{Equation::GrayScott, 2, 40, Boundary::Periodic, Precision::Fp64, 13, 45, 32},
                       Run{Equation::AllenCahn, 2, 40, Boundary::Periodic, Precision::Fp32, 17, 56, 64},
                       Run{Equation::Heat, 3, 30, Boundary::Periodic, Precision::Fp32, 15, 45, 64, ring},
                       Run{Equation::Heat, 1, 30, Boundary::Periodic, Precision::Fp32, 2, 40, 32, ring},
                       Run{Equation::Heat, 4, 30, Boundary::Fixed, Precision::Fp32, 9, 64, 64},
                       // Several tiles across, the last one partial: the x ends read wrapped by
                       // the bulk-copy ring from tiles that do not start or end at them (fp64 R = 4:
                       // two halo vectors, one of them beyond the end for two lanes).
                       Run{Equation::Heat, 3, 30, Boundary::Periodic, Precision::Fp32, 9, 260, 20},
                       Run{Equation::Heat, 4, 30, Boundary::Periodic, Precision::Fp64, 9, 130, 20},
                       Run{Equation::Wave, 2, 30, Boundary::Periodic, Precision::Fp32, 9, 132, 20},
                       Run{Equation::GrayScott, 3, 40, Boundary::Periodic, Precision::Fp32, 9, 136, 20},
                       Run{Equation::Heat, 2, 30, Boundary::Periodic, Precision::Fp64, 9, 4, 20},
                       // Three tiles down, the last partial; rows not whole threads' (the y faces
                       // by the fill).
                       Run{Equation::Heat, 4, 30, Boundary::Periodic, Precision::Fp32, 9, 40, 68},
                       Run{Equation::Heat, 2, 30, Boundary::Periodic, Precision::Fp32, 9, 132, 30},
                       // The register-prefetch kernels read the y ends wrapped: one tile down (its
                       // rows above and below both from itself). Gray-Scott at R = 2 on whole rows:
                       // the bulk-copy ring of 16 x 1 on Hopper, the register prefetch before.
                       Run{Equation::Heat, 1, 30, Boundary::Periodic, Precision::Fp32, 5, 48, 8},
                       Run{Equation::GrayScott, 2, 40, Boundary::Periodic, Precision::Fp32, 9, 64, 32}})
    expect_like_the_cpu_backend(r);
}

// The statistics' non-finite count and first index on the device, in the same pass as the sums
// (the model's non-finite check reads them instead of downloading the fields): NaN, +inf and -inf
// at known indices of a random field, every state field of every equation, both precisions, on a
// small grid (one point per reduction thread) and on one with more points than the reduction has
// threads (each thread visits several). Checked against the indices placed and the CPU engine.
// Diagnostics behind the steps: reductions queued at one moment and taken after more steps were
// queued give that moment's figures, bit for bit those of stats() and wave_energy() then.
TEST(StencilGpu, QueuedReductionsAreThoseOfTheMomentTheyWereQueued) {
  SKIP_WITHOUT_GPU();
  for (Equation eq : all_equations())
    for (Precision pr : {Precision::Fp32, Precision::Fp64}) {
      const StencilProblem p = problem(eq, 2, 37, 50, 29);
      auto gpu = make_stencil_cuda(strategy(Backend::Cuda, pr, Tiling::Shared, CoeffSpace::Constant), p);
      const int fields = stencil_field_count(eq);
      for (int f = 0; f < fields; ++f) gpu->upload(f, random_fp32_field(p.points(), 90 + unsigned(f), 0.2, 1.0));
      const bool wave = eq == Equation::Wave;
      const double dt = 1e-4;
      std::vector<FieldStats> then;
      for (int f = 0; f < fields; ++f) then.push_back(gpu->stats(f));
      const double energy_then = wave ? gpu->wave_energy(dt) : 0.0;
      auto take = gpu->queue_reductions(wave, dt);
      for (int i = 0; i < 3; ++i) gpu->step(dt);
      const StencilEngine::Reductions r = take();
      const std::string what = std::string(name(eq)) + " " + name(pr);
      ASSERT_EQ(r.stats.size(), std::size_t(fields)) << what;
      for (int f = 0; f < fields; ++f) {
        const FieldStats& a = r.stats[std::size_t(f)];
        const FieldStats& b = then[std::size_t(f)];
        EXPECT_EQ(a.sum, b.sum) << what << " field " << f;
        EXPECT_EQ(a.sum_sq, b.sum_sq) << what << " field " << f;
        EXPECT_EQ(a.min, b.min) << what << " field " << f;
        EXPECT_EQ(a.max, b.max) << what << " field " << f;
        EXPECT_EQ(a.non_finite, 0) << what;
        EXPECT_EQ(a.first_non_finite, -1) << what;
      }
      EXPECT_EQ(r.wave_energy, energy_then) << what;
      // The steps changed the state: the figures now are not those queued.
      EXPECT_NE(gpu->stats(0).sum_sq, then[0].sum_sq) << what;
    }
}

// The reductions against the CPU backend on random fields: the wave's energy at every radius
// (37 x 50 columns a point each, in ragged tiles, 300 planes in 18 chunks of up to 17 at R = 1 on
// an H100 or H200; 512-point rows a vector a thread), and every field's statistics (a 37-point
// row: 9 vectors and a point; a 512-point row: whole vectors). Tolerances: relative 1e-10 in
// fp64, 1e-5 for the fp32 energy (the Laplacian in fp32 on both, their FMAs contracted
// differently) and 1e-6 for the fp32 sums (the vectors' sums of 4 rounded in fp32); one vector
// counted twice or left out moves the sums by more (4 / 555,000 = 7e-6 of a field in 0.5..1.5),
// a column or vector of a chunk the energy by more than 1e-10. Min and max exactly.
TEST(StencilGpu, EnergyAndStatisticsMatchTheCpuBackendOnRandomFields) {
  SKIP_WITHOUT_GPU();
  for (const auto& dims : {std::vector<int>{37, 50, 300}, std::vector<int>{512, 16, 40}})
    for (Boundary bc : {Boundary::Periodic, Boundary::Fixed})
      for (Precision pr : {Precision::Fp32, Precision::Fp64})
        for (int R = 1; R <= 4; ++R) {
          StencilProblem p = problem(Equation::Wave, R, dims[0], dims[1], dims[2]);
          p.boundary = bc;
          auto gpu = make_stencil_cuda(strategy(Backend::Cuda, pr, Tiling::Shared, CoeffSpace::Constant), p);
          auto cpu = make_stencil_cpu(strategy(Backend::Cpu, pr, Tiling::Shared, CoeffSpace::Constant), p);
          for (int f = 0; f < 2; ++f) {
            const auto v = random_fp32_field(p.points(), 110 + unsigned(f + R), 0.5, 1.5);
            gpu->upload(f, v);
            cpu->upload(f, v);
          }
          const std::string what = std::to_string(dims[0]) + "x" + std::to_string(dims[1]) + "x" +
                                   std::to_string(dims[2]) + " R=" + std::to_string(R) + " " + name(pr) +
                                   (bc == Boundary::Fixed ? " fixed" : " periodic");
          const bool fp64 = pr == Precision::Fp64;
          const double dt = 1e-3;
          EXPECT_NEAR(gpu->wave_energy(dt) / cpu->wave_energy(dt), 1.0, fp64 ? 1e-10 : 1e-5) << what;
          for (int f = 0; f < 2; ++f) {
            const FieldStats g = gpu->stats(f), c = cpu->stats(f);
            EXPECT_NEAR(g.sum / c.sum, 1.0, fp64 ? 1e-10 : 1e-6) << what << " field " << f;
            EXPECT_NEAR(g.sum_sq / c.sum_sq, 1.0, fp64 ? 1e-10 : 1e-6) << what << " field " << f;
            EXPECT_EQ(g.min, c.min) << what << " field " << f;
            EXPECT_EQ(g.max, c.max) << what << " field " << f;
            EXPECT_EQ(g.non_finite, 0) << what << " field " << f;
          }
        }
}

TEST(StencilGpu, StatisticsCountNonFiniteValuesAndTheFirstIndex) {
  SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  for (const auto& dims : {std::vector<int>{37, 50, 29}, std::vector<int>{512, 256, 40}})
    for (Equation eq : all_equations())
      for (Precision pr : {Precision::Fp32, Precision::Fp64}) {
        const StencilProblem p = problem(eq, 1, dims[0], dims[1], dims[2]);
        auto gpu = make_stencil_cuda(strategy(Backend::Cuda, pr, Tiling::Shared, CoeffSpace::Constant), p);
        auto cpu = make_stencil_cpu(strategy(Backend::Cpu, pr, Tiling::Shared, CoeffSpace::Constant), p);
        const std::int64_t n = p.points();
        for (int f = 0; f < stencil_field_count(eq); ++f) {
          const std::string what = std::string(name(eq)) + " field " + std::to_string(f) + " " + name(pr) + " " +
                                   std::to_string(n) + " points";
          std::vector<double> v = random_fp32_field(n, 70 + unsigned(f), -1.0, 1.0);
          gpu->upload(f, v);
          const FieldStats clean = gpu->stats(f);
          EXPECT_EQ(clean.non_finite, 0) << what;
          EXPECT_EQ(clean.first_non_finite, -1) << what;
          // The first bad value in the middle of the grid (several blocks from the start), the others after it.
          const std::int64_t first = n / 2 + 3 + f;
          v[std::size_t(n - 1)] = nan;
          v[std::size_t(first + 100000 % (n - first - 1))] = -inf;
          v[std::size_t(first + 1)] = inf;
          v[std::size_t(first)] = nan;
          gpu->upload(f, v);
          cpu->upload(f, v);
          const FieldStats g = gpu->stats(f), c = cpu->stats(f);
          EXPECT_EQ(g.non_finite, 4) << what;
          EXPECT_EQ(g.first_non_finite, first) << what;
          EXPECT_EQ(g.non_finite, c.non_finite) << what;
          EXPECT_EQ(g.first_non_finite, c.first_non_finite) << what;
          EXPECT_TRUE(std::isnan(g.sum)) << what;
          EXPECT_EQ(g.min, -inf) << what;
          EXPECT_EQ(g.max, inf) << what;
          // Index 0 is found too (no thread or block offset lost).
          v[0] = inf;
          gpu->upload(f, v);
          EXPECT_EQ(gpu->stats(f).first_non_finite, 0) << what;
          EXPECT_EQ(gpu->stats(f).non_finite, 5) << what;
        }
      }
}

// Fixed boundaries: no kernel writes a halo, so the engine fills every grid's halo once, and again
// after an upload (which writes the grid whole); periodic halos are filled every step. Counted in
// the telemetry records (the values are checked against the CPU backend above, where init_pair
// uploads after a first step: a halo not refilled after that upload would hold zeros, not 0.7).
TEST(StencilGpu, FixedHalosAreFilledOnceAndAfterAnUpload) {
  SKIP_WITHOUT_GPU();
  auto count = [](const std::vector<KernelRecord>& recs, bool halo) {
    int n = 0;
    for (const KernelRecord& r : recs) n += r.kernel.starts_with("stencil_halo") == halo;
    return n;
  };
  for (Boundary bc : {Boundary::Fixed, Boundary::Periodic}) {
    StencilProblem p = problem(Equation::Heat, 1, 45, 38, 33);
    p.boundary = bc;
    p.boundary_value = 0.7;
    auto gpu = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32, Tiling::Shared, CoeffSpace::Constant), p);
    const std::vector<double> v = random_fp32_field(p.points(), 5, 0.5, 1.5);
    gpu->upload(0, v);
    const double dt = stable_dt(p, 0.5);
    for (int s = 0; s < 10; ++s) gpu->step(dt);
    std::vector<KernelRecord> recs = gpu->take_records();
    EXPECT_EQ(count(recs, false), 10) << (bc == Boundary::Fixed ? "fixed" : "periodic");
    EXPECT_EQ(count(recs, true), bc == Boundary::Fixed ? 1 : 10) << (bc == Boundary::Fixed ? "fixed" : "periodic");
    gpu->upload(0, v);
    for (int s = 0; s < 3; ++s) gpu->step(dt);
    recs = gpu->take_records();
    EXPECT_EQ(count(recs, true), bc == Boundary::Fixed ? 1 : 3) << (bc == Boundary::Fixed ? "fixed" : "periodic");
  }
}

}  // namespace

// A grid split over ranks updates its interior and its z faces (R planes at each end) in separate
// launches, the faces after the halo exchange: each launch is given planes [k0, k0 + n) as a grid
// of its own (z_range). Forced on one rank (StencilTuning::split_z), every equation, radius,
// precision and tiling must give the whole-grid launch's values bit for bit (the same point
// updates on the same inputs), on odd sizes, periodic and fixed, with a slab thick enough for an
// interior and one of 2R + 1 planes (a one-plane interior).
TEST(StencilGpu, SplitInteriorAndZFaceLaunchesMatchTheWholeGridBitForBit) {
  SKIP_WITHOUT_GPU();
  for (Equation eq : all_equations())
    for (int R = 1; R <= 4; ++R)
      for (Precision pr : {Precision::Fp32, Precision::Fp64})
        for (Tiling t : {Tiling::None, Tiling::Shared})
          for (int nz : {29, 2 * R + 1}) {
            // Periodic: rows of 40 points (whole 32-byte sectors), so that the kernels write the x halos.
            StencilProblem p = problem(eq, R, R % 2 ? 40 : 37, 31, nz);
            p.boundary = R % 2 ? Boundary::Periodic : Boundary::Fixed;
            p.boundary_value = 0.3;
            const Strategy s = strategy(Backend::Cuda, pr, t, R == 3 ? CoeffSpace::Global : CoeffSpace::Constant);
            StencilTuning split;
            split.split_z = true;
            auto whole = make_stencil_cuda(s, p);
            auto parts = make_stencil_cuda(s, p, split);
            const int nf = stencil_field_count(eq);
            const double dt = stable_dt(p, 0.5);
            // Poisoned output buffers first (a launch that skipped a plane would leave NaN there).
            const std::vector<double> nan(std::size_t(p.points()), std::numeric_limits<double>::quiet_NaN());
            for (int f = 0; f < nf; ++f) whole->upload(f, nan), parts->upload(f, nan);
            whole->step(dt), parts->step(dt);
            for (int f = 0; f < nf; ++f) {
              const auto v = random_initial_field(p, f, 40);
              whole->upload(f, v), parts->upload(f, v);
            }
            for (int step = 0; step < 7; ++step) whole->step(dt), parts->step(dt);
            for (int f = 0; f < nf; ++f) {
              const std::vector<double> a = whole->download(f), b = parts->download(f);
              std::size_t differ = 0, nans = 0;
              for (std::size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i], nans += !std::isfinite(b[i]);
              EXPECT_EQ(differ, 0u) << name(eq) << " R=" << R << " " << name(pr) << " " << name(t) << " nz=" << nz
                                    << " field " << f;
              EXPECT_EQ(nans, 0u);
            }
            // The records name the face launches apart and count the planes: the interior's points
            // and the faces' add up to the grid's.
            double points = 0;
            bool faces = false;
            for (const KernelRecord& r : parts->take_records()) {
              if (r.kernel.starts_with("stencil_halo")) continue;
              faces = faces || r.kernel.ends_with("_zfaces");
              points += r.work;
            }
            EXPECT_TRUE(faces);
            EXPECT_DOUBLE_EQ(points, 8.0 * double(p.points())) << "8 steps of the whole grid";
          }
}
