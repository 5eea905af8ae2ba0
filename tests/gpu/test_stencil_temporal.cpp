// Temporally blocked stencil passes (kernels/cuda/stencil_temporal.cu) against the single-step
// CUDA engine (make_stencil_cuda, shared tiling) and the CPU reference:
//  - every equation, radius and precision built, periodic and fixed boundaries, odd sizes, every
//    fused step count T = 1..max, 100 (or 101) steps so that the last pass is a partial one;
//    heat and wave bit for bit, Gray-Scott within a stated relative bound (see below);
//  - one pass of each T from the same state against the engine after T steps: the first time
//    level that differs, and where (first differing (i, j, k), got and expected values, ulps);
//  - every instantiated tile shape; several tiles and z chunks in every direction;
//  - the CPU reference (float64) after a few passes;
//  - the cost model the driver fills, and the errors it raises.
// Inputs are random (never zeros); every output buffer is NaN-filled before each pass and every
// input's halo and row padding holds NaN (the passes must read neither), so a point never
// written, or a halo read, shows up as NaN.
// Benchmark (skipped unless TIERSIM_BENCH_TEMPORAL=1): steps/s of the temporal pass against the
// single-step engine at 512^3, one line per equation, radius, precision, shape and T.
// Skipped, with the reason, where no GPU is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "base/env.hpp"
#include "kernels/device_info.hpp"
#include "kernels/stencil_engine.hpp"
#include "gpu_test.hpp"

#if TIERSIM_HAVE_CUDA
#include <cuda_runtime.h>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/device_buffer.hpp"
#include "kernels/cuda/stencil_temporal.cuh"
#endif

using namespace tiersim;
using namespace tiersim::test;

namespace {

#if !TIERSIM_HAVE_CUDA

TEST(StencilTemporal, NeedsCuda) { GTEST_SKIP() << "built without CUDA: no temporally blocked kernels"; }

#else

StencilProblem problem(Equation eq, int R, int nx, int ny, int nz, Boundary bc) {
  StencilProblem p;
  p.equation = eq;
  p.nx = nx, p.ny = ny, p.nz = nz;
  p.radius = R;
  p.h[0] = 1.0 / nx, p.h[1] = 1.1 / ny, p.h[2] = 0.9 / nz;  // a different spacing per axis
  if (eq == Equation::GrayScott) p.h[0] = p.h[1] = p.h[2] = 1.0;
  p.boundary = bc;
  p.boundary_value = 0.7;
  // Gray-Scott's U and V: values of their own (one value for both would pass unnoticed).
  p.constants<equations::GrayScott>().boundary_u = 0.7;
  p.constants<equations::GrayScott>().boundary_v = 0.2;
  return p;
}

double stable_dt(const StencilProblem& p, double fraction) { return fraction * stencil_dt_limit(p); }

Strategy strategy(Backend b, Precision pr) {
  Strategy s;
  s.backend = b, s.precision = pr, s.tiling = Tiling::Shared, s.coeffs = CoeffSpace::Constant;
  return s;
}

std::string label(const StencilProblem& p, bool fp64) {
  return std::string(name(p.equation)) + " R=" + std::to_string(p.radius) + (fp64 ? " fp64 " : " fp32 ") +
         (p.boundary == Boundary::Fixed ? "fixed " : "periodic ") + std::to_string(p.nx) + "x" + std::to_string(p.ny) +
         "x" + std::to_string(p.nz);
}

// One grid in device memory, laid out as the engine's (GridSpec).
template <class T>
class DeviceGrid {
 public:
  DeviceGrid(int nx, int ny, int nz, int r) : spec_(GridSpec<T>::make(nx, ny, nz, r)) {
    buf_.allocate(spec_.bytes(), "temporal test grid");
    poison();
  }
  GridView<T> view() const { return spec_.view(buf_.as<T>()); }
  // All bits set: a NaN in fp32 and in fp64, halos and padding included.
  void poison() { TIERSIM_CUDA_CHECK(cudaMemset(buf_.data(), 0xFF, spec_.bytes()), "poison"); }
  // The interior from v; halos and padding NaN (a pass must not read them).
  void upload(const std::vector<double>& v) {
    std::vector<T> h(spec_.elements(), std::numeric_limits<T>::quiet_NaN());
    const GridView<T> hv = spec_.view(h.data());
    for (int k = 0; k < hv.nz; ++k)
      for (int j = 0; j < hv.ny; ++j)
        for (int i = 0; i < hv.nx; ++i) hv(i, j, k) = T(v[(std::size_t(k) * hv.ny + j) * hv.nx + i]);
    TIERSIM_CUDA_CHECK(cudaMemcpy(buf_.data(), h.data(), spec_.bytes(), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<double> download() const {
    std::vector<T> h(spec_.elements());
    TIERSIM_CUDA_CHECK(cudaMemcpy(h.data(), buf_.data(), spec_.bytes(), cudaMemcpyDeviceToHost), "download");
    const GridView<T> hv = spec_.view(h.data());
    std::vector<double> v(std::size_t(hv.interior_points()));
    for (int k = 0; k < hv.nz; ++k)
      for (int j = 0; j < hv.ny; ++j)
        for (int i = 0; i < hv.nx; ++i) v[(std::size_t(k) * hv.ny + j) * hv.nx + i] = double(hv(i, j, k));
    return v;
  }
  // Elements outside the interior (halos, row padding) no longer holding the poison: a pass
  // that wrote past its tiles.
  std::size_t written_outside() const {
    std::vector<T> h(spec_.elements());
    TIERSIM_CUDA_CHECK(cudaMemcpy(h.data(), buf_.data(), spec_.bytes(), cudaMemcpyDeviceToHost), "download");
    const GridView<T> hv = spec_.view(h.data());
    std::vector<char> interior(h.size(), 0);
    for (int k = 0; k < hv.nz; ++k)
      for (int j = 0; j < hv.ny; ++j)
        for (int i = 0; i < hv.nx; ++i) interior[std::size_t(&hv(i, j, k) - h.data())] = 1;
    std::size_t n = 0;
    for (std::size_t e = 0; e < h.size(); ++e) n += !interior[e] && !std::isnan(h[e]);
    return n;
  }

 private:
  GridSpec<T> spec_;
  cuda::DeviceBuffer buf_;
};

// The fields of a problem in two sets of grids that the passes ping-pong between.
template <class T>
class TemporalStencil {
 public:
  TemporalStencil(const StencilProblem& p, double dt) : p_(p) {
    nin_ = stencil_field_count(p.equation);
    nout_ = p.equation == Equation::Heat ? 1 : 2;
    for (int g = 0; g < 2; ++g)
      for (int f = 0; f < nin_; ++f) grids_[g].emplace_back(p.nx, p.ny, p.nz, p.radius);
    co_ = make_laplacian_coeffs<T>(p.radius, p.h[0], p.h[1], p.h[2]);
    // As the single-step engine converts them (kernels/cuda/stencil_cuda.cu).
    prm_.heat = equations::Heat::params<T>(p.constants<equations::Heat>(), dt);
    prm_.wave = equations::Wave::params<T>(p.constants<equations::Wave>(), dt);
    prm_.gray_scott = equations::GrayScott::params<T>(p.constants<equations::GrayScott>(), dt);
    bv_[0] = T(p.field_boundary_value(0));
    bv_[1] = T(p.field_boundary_value(1));
  }
  void upload(int f, const std::vector<double>& v) { grids_[cur_][f].upload(v); }
  std::vector<double> download(int f) const { return grids_[cur_][f].download(); }
  // One pass of `steps` steps (0: the driver's default); the outputs are NaN-filled first.
  int pass(int steps, const cuda::TemporalOptions& opt = {}) {
    for (auto& g : grids_[1 - cur_]) g.poison();
    const int done = launch(steps, opt);
    TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), rec_.kernel);
    return done;
  }
  // The pass alone, queued on the legacy default stream (the benchmark times it with events).
  int launch(int steps, cuda::TemporalOptions opt) {
    opt.steps = steps;
    auto& in = grids_[cur_];
    auto& out = grids_[1 - cur_];
    GridView<T> iv[2], ov[2];
    for (int f = 0; f < nin_; ++f) iv[f] = in[f].view(), ov[f] = out[f].view();
    const int done = cuda::launch_stencil_temporal<T>(p_.equation, p_.radius, iv, ov, co_, prm_, p_.boundary, bv_,
                                                      nullptr, rec_, opt);
    cur_ = 1 - cur_;
    return done;
  }
  // One pass of `steps` steps as launches over z ranges of the grid, each reading the planes
  // beside it as a neighbour's (TemporalOptions::z_below, z_above); the outputs NaN-filled first.
  struct ZRange {
    int k0, planes, below, above;
  };
  void pass_z_ranges(int steps, const std::vector<ZRange>& ranges) {
    for (auto& g : grids_[1 - cur_]) g.poison();
    auto& in = grids_[cur_];
    auto& out = grids_[1 - cur_];
    for (const ZRange& z : ranges) {
      GridView<T> iv[2], ov[2];
      for (int f = 0; f < nin_; ++f)
        iv[f] = z_range(in[f].view(), z.k0, z.planes), ov[f] = z_range(out[f].view(), z.k0, z.planes);
      cuda::TemporalOptions opt;
      opt.steps = steps, opt.z_below = z.below, opt.z_above = z.above;
      cuda::launch_stencil_temporal<T>(p_.equation, p_.radius, iv, ov, co_, prm_, p_.boundary, bv_, nullptr, rec_, opt);
    }
    TIERSIM_CUDA_CHECK(cudaDeviceSynchronize(), rec_.kernel);
    cur_ = 1 - cur_;
  }
  // n steps in passes of T, the last one partial where T does not divide n.
  int advance(int n, int per_pass, const cuda::TemporalOptions& opt = {}) {
    int passes = 0;
    for (int left = n; left > 0; ++passes) left -= pass(std::min(per_pass, left), opt);
    return passes;
  }
  const KernelRecord& record() const { return rec_; }
  std::size_t written_outside() const {
    std::size_t n = 0;
    for (const auto& g : grids_[cur_]) n += g.written_outside();
    return n;
  }
  int fields() const { return nin_; }

 private:
  StencilProblem p_;
  int nin_ = 1, nout_ = 1, cur_ = 0;
  std::vector<DeviceGrid<T> > grids_[2];
  StencilCoeffs<T> co_;
  cuda::TemporalParams<T> prm_;
  T bv_[2] = {};
  KernelRecord rec_;
};

// Distance in units in the last place between two values of T (both finite).
template <class T>
std::int64_t ulps(T a, T b) {
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  I ia, ib;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  // Sign-magnitude to a monotonic integer line.
  const long double oa = ia < 0 ? -(long double)(ia & std::numeric_limits<I>::max()) : (long double)ia;
  const long double ob = ib < 0 ? -(long double)(ib & std::numeric_limits<I>::max()) : (long double)ib;
  const long double d = std::fabs(oa - ob);
  return d > 9e18L ? std::numeric_limits<std::int64_t>::max() : std::int64_t(d);
}

struct Diff {
  std::size_t count = 0, nans = 0, first = 0;
  std::int64_t max_ulps = 0;
  double max_rel = 0, got = 0, ref = 0;
};

template <class T>
Diff compare(const std::vector<double>& got, const std::vector<double>& ref) {
  Diff d;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    if (got[i] == ref[i]) continue;  // bit for bit (the values came from T: exact in double)
    if (!std::isfinite(got[i])) ++d.nans;
    if (d.count++ == 0) d.first = i, d.got = got[i], d.ref = ref[i];
    if (std::isfinite(got[i])) {
      d.max_ulps = std::max(d.max_ulps, ulps(T(got[i]), T(ref[i])));
      d.max_rel = std::max(d.max_rel, std::fabs(got[i] - ref[i]) / std::max(std::fabs(ref[i]), 1e-30));
    } else {
      d.max_rel = std::numeric_limits<double>::infinity();
    }
  }
  return d;
}

std::string describe(const Diff& d, const StencilProblem& p, std::size_t n) {
  const std::size_t i = d.first % p.nx, j = (d.first / p.nx) % p.ny, k = d.first / (std::size_t(p.nx) * p.ny);
  char buf[400];
  std::snprintf(buf, sizeof buf,
                "%zu of %zu points differ (%zu NaN or infinite; max %" PRId64
                " ulps, max relative %.3g); first at (i, j, k) = (%zu, %zu, %zu): got %.17g, expected %.17g",
                d.count, n, d.nans, d.max_ulps, d.max_rel, i, j, k, d.got, d.ref);
  return buf;
}

// Gray-Scott: expected bit for bit too (the same gray_scott_update on the same values), but
// u v^2 is used twice and FMA contraction around it is the compiler's choice per kernel, so the
// assertion is a relative bound; the report says whether it was bit for bit.
constexpr double kGrayScottRel32 = 1e-5, kGrayScottRel64 = 1e-12;

// Compares every field; returns false (with failures recorded) where they differ.
template <class T>
bool expect_match(const StencilProblem& p, StencilEngine& eng, const TemporalStencil<T>& tmp, const std::string& what) {
  bool ok = true;
  for (int f = 0; f < tmp.fields(); ++f) {
    const std::vector<double> got = tmp.download(f), ref = eng.download(f);
    const Diff d = compare<T>(got, ref);
    if (d.count == 0) continue;
    const bool gs = p.equation == Equation::GrayScott && d.nans == 0 &&
                    d.max_rel <= (sizeof(T) == 4 ? kGrayScottRel32 : kGrayScottRel64);
    if (gs) {
      std::printf("[ note ] %s field %d: within the Gray-Scott bound, not bit for bit: %s\n", what.c_str(), f,
                  describe(d, p, ref.size()).c_str());
      continue;
    }
    ADD_FAILURE() << what << ", field " << f << ": " << describe(d, p, ref.size());
    ok = false;
  }
  return ok;
}

// The cases: every equation, radius and precision with a temporal kernel, both boundaries.
using Case = std::tuple<Equation, int, bool, Boundary>;  // equation, R, fp64, boundary

std::string case_name(const ::testing::TestParamInfo<Case>& i) {
  const auto [eq, R, fp64, bc] = i.param;
  const std::string e = eq == Equation::Heat ? "heat" : eq == Equation::Wave ? "wave" : "grayscott";
  return e + "_r" + std::to_string(R) + (fp64 ? "_fp64" : "_fp32") + (bc == Boundary::Fixed ? "_fixed" : "_periodic");
}

std::vector<Case> all_cases() {
  std::vector<Case> c;
  for (Equation eq : {Equation::Heat, Equation::Wave, Equation::GrayScott})
    for (int R = 1; R <= kMaxRadius; ++R)
      for (bool fp64 : {false, true})
        for (Boundary bc : {Boundary::Periodic, Boundary::Fixed})
          if (!cuda::temporal_shapes(eq, R, fp64).empty()) c.emplace_back(eq, R, fp64, bc);
  return c;
}

class StencilTemporal : public ::testing::TestWithParam<Case> {};

// 100 steps (101 where T divides 100, so that the last pass is partial) against the engine.
template <class T>
void run_hundred_steps(Equation eq, int R, Boundary bc) {
  const bool fp64 = std::is_same_v<T, double>;
  const Precision pr = fp64 ? Precision::Fp64 : Precision::Fp32;
  const int tmax = cuda::temporal_shapes(eq, R, fp64).front().max_steps;
  struct Size {
    int nx, ny, nz, z_chunk, blocks;  // both 0: the driver's choice (on a small grid: many short chunks)
  };
  // Heat at R = 1 also 7 blocks sharing 2 x 2 tiles of 19 planes, so that blocks start and end
  // mid-tile and most walk into a second tile (the passes that walk shares).
  std::vector<Size> sizes = {Size{37, 29, 23, 0, 0}, Size{64, 33, 17, 17, 0}};
  if (eq == Equation::Heat && R == 1) sizes.push_back(Size{150, 41, 19, 0, 7});
  for (const Size sz : sizes) {
    const StencilProblem p = problem(eq, R, sz.nx, sz.ny, sz.nz, bc);
    const double dt = stable_dt(p, 0.5);
    for (int T_ = 1; T_ <= tmax; ++T_) {
      const int steps = T_ > 1 && 100 % T_ == 0 ? 101 : 100;
      auto eng = make_stencil_cuda(strategy(Backend::Cuda, pr), p);
      TemporalStencil<T> tmp(p, dt);
      for (int f = 0; f < tmp.fields(); ++f) {
        const std::vector<double> v = random_initial_field(p, f, 17 + unsigned(R));
        eng->upload(f, v);
        tmp.upload(f, v);
      }
      for (int s = 0; s < steps; ++s) eng->step(dt);
      cuda::TemporalOptions opt;
      opt.z_chunk = sz.z_chunk, opt.blocks = sz.blocks;
      const int passes = tmp.advance(steps, T_, opt);
      const std::string what = label(p, fp64) + ", T=" + std::to_string(T_) + ", " + std::to_string(steps) +
                               " steps in " + std::to_string(passes) + " passes (" + tmp.record().kernel + ")";
      if (!expect_match(p, *eng, tmp, what)) return;  // one report per case is enough
    }
  }
}

TEST_P(StencilTemporal, HundredStepsMatchTheSingleStepEngine) {
  SKIP_WITHOUT_GPU();
  const auto [eq, R, fp64, bc] = GetParam();
  if (fp64)
    run_hundred_steps<double>(eq, R, bc);
  else
    run_hundred_steps<float>(eq, R, bc);
}

// One pass of T steps for each T from the same state, against the engine after T steps: the
// first time level that differs is the one to look at.
template <class T>
void run_each_level(Equation eq, int R, Boundary bc) {
  const bool fp64 = std::is_same_v<T, double>;
  const Precision pr = fp64 ? Precision::Fp64 : Precision::Fp32;
  const int tmax = cuda::temporal_shapes(eq, R, fp64).front().max_steps;
  const StencilProblem p = problem(eq, R, 45, 38, 21, bc);
  const double dt = stable_dt(p, 0.5);
  auto eng = make_stencil_cuda(strategy(Backend::Cuda, pr), p);
  std::vector<std::vector<double> > init;
  for (int f = 0; f < stencil_field_count(eq); ++f) {
    init.push_back(random_initial_field(p, f, 5 + unsigned(R)));
    eng->upload(f, init.back());
  }
  for (int T_ = 1; T_ <= tmax; ++T_) {
    eng->step(dt);
    TemporalStencil<T> tmp(p, dt);
    for (int f = 0; f < tmp.fields(); ++f) tmp.upload(f, init[f]);
    tmp.pass(T_);
    EXPECT_EQ(tmp.written_outside(), 0u) << label(p, fp64) << ", T=" << T_ << ": halo or padding written";
    if (!expect_match(
            p, *eng, tmp,
            label(p, fp64) + ", one pass, time level " + std::to_string(T_) + " (" + tmp.record().kernel + ")"))
      return;  // the later levels inherit the difference
  }
}

TEST_P(StencilTemporal, EachTimeLevelOfOnePassMatches) {
  SKIP_WITHOUT_GPU();
  const auto [eq, R, fp64, bc] = GetParam();
  if (fp64)
    run_each_level<double>(eq, R, bc);
  else
    run_each_level<float>(eq, R, bc);
}

// A pass split into launches over z ranges, each reading T R planes beside it as a neighbour's
// (what a rank's slab does with the planes its neighbours send: stencil_cuda.cu), against the
// pass over the whole grid: bit for bit on the planes the ranges cover. Fixed boundaries: three
// ranges that cover the grid, the outer ones with the grid's face on one side (z_below or z_above
// 0); periodic: a middle range with neighbours on both sides (the wrap across ranks is the MPI
// tests' work, tests/integration/test_mpi_stencil.sh). Every T; random inputs, NaN-filled outputs.
template <class T>
void run_z_ranges(Equation eq, int R, Boundary bc) {
  const bool fp64 = std::is_same_v<T, double>;
  const int tmax = cuda::temporal_shapes(eq, R, fp64).front().max_steps;
  const StencilProblem p = problem(eq, R, 45, 38, 37, bc);
  const double dt = stable_dt(p, 0.5);
  for (int T_ = 1; T_ <= tmax; ++T_) {
    const int d = T_ * R;
    TemporalStencil<T> whole(p, dt), split(p, dt);
    for (int f = 0; f < whole.fields(); ++f) {
      const std::vector<double> v = random_initial_field(p, f, 41 + unsigned(R));
      whole.upload(f, v);
      split.upload(f, v);
    }
    whole.pass(T_);
    // Ranges of 11, 13 and 13 planes: each as thick as T R at least (8 at most), as a rank's slab is.
    int lo = 0, hi = p.nz;
    if (bc == Boundary::Fixed)
      split.pass_z_ranges(T_, {{0, 11, 0, d}, {11, 13, d, d}, {24, 13, d, 0}});
    else
      split.pass_z_ranges(T_, {{d, p.nz - 2 * d, d, d}}), lo = d, hi = p.nz - d;
    const std::string what = label(p, fp64) + ", T=" + std::to_string(T_) + ", planes " + std::to_string(lo) + ".." +
                             std::to_string(hi - 1) + " (" + split.record().kernel + ")";
    for (int f = 0; f < whole.fields(); ++f) {
      const std::size_t plane = std::size_t(p.nx) * p.ny;
      const std::vector<double> a = whole.download(f), b = split.download(f);
      const std::vector<double> ref(a.begin() + lo * plane, a.begin() + hi * plane),
          got(b.begin() + lo * plane, b.begin() + hi * plane);
      const Diff df = compare<T>(got, ref);
      StencilProblem part = p;
      part.nz = hi - lo;
      EXPECT_EQ(df.count, 0u) << what << ", field " << f << ": " << describe(df, part, ref.size())
                              << " (k counted from plane " << lo << ")";
    }
  }
}

TEST_P(StencilTemporal, ZRangesWithNeighbourPlanesMatchTheWholeGrid) {
  SKIP_WITHOUT_GPU();
  const auto [eq, R, fp64, bc] = GetParam();
  if (fp64)
    run_z_ranges<double>(eq, R, bc);
  else
    run_z_ranges<float>(eq, R, bc);
}

// Against the CPU reference in float64 after two passes and a partial one: fp32 within 1e-5
// (relative L2 norm), fp64 within 1e-12.
template <class T>
void run_vs_cpu(Equation eq, int R, Boundary bc) {
  const bool fp64 = std::is_same_v<T, double>;
  const int tmax = cuda::temporal_shapes(eq, R, fp64).front().max_steps;
  const StencilProblem p = problem(eq, R, 37, 29, 23, bc);
  const double dt = stable_dt(p, 0.5);
  auto cpu = make_stencil_cpu(strategy(Backend::Cpu, Precision::Fp64), p);
  TemporalStencil<T> tmp(p, dt);
  for (int f = 0; f < tmp.fields(); ++f) {
    const std::vector<double> v = random_initial_field(p, f, 29);
    cpu->upload(f, v);
    tmp.upload(f, v);
  }
  const int steps = 2 * tmax + (tmax > 1 ? 1 : 0);
  for (int s = 0; s < steps; ++s) cpu->step(dt);
  tmp.advance(steps, tmax);
  for (int f = 0; f < tmp.fields(); ++f) {
    const std::vector<double> got = tmp.download(f), ref = cpu->download(f);
    double e2 = 0, r2 = 0;
    std::size_t bad = 0;
    for (std::size_t i = 0; i < ref.size(); ++i) {
      if (!std::isfinite(got[i])) ++bad;
      e2 += (got[i] - ref[i]) * (got[i] - ref[i]), r2 += ref[i] * ref[i];
    }
    EXPECT_EQ(bad, 0u) << label(p, fp64) << " field " << f << ": points never written (NaN)";
    EXPECT_LT(std::sqrt(e2 / r2), fp64 ? 1e-12 : 1e-5) << label(p, fp64) << " field " << f << ", " << steps << " steps";
  }
}

TEST_P(StencilTemporal, MatchesTheCpuReference) {
  SKIP_WITHOUT_GPU();
  const auto [eq, R, fp64, bc] = GetParam();
  if (fp64)
    run_vs_cpu<double>(eq, R, bc);
  else
    run_vs_cpu<float>(eq, R, bc);
}

INSTANTIATE_TEST_SUITE_P(AllBuilt, StencilTemporal, ::testing::ValuesIn(all_cases()), case_name);

// Every instantiated tile shape (the sweep's alternatives), at its largest T, bit for bit.
TEST(StencilTemporalShapes, EveryShapeMatchesTheEngine) {
  SKIP_WITHOUT_GPU();
  for (const Case& c : all_cases()) {
    const auto [eq, R, fp64, bc] = c;
    const std::vector<cuda::TemporalShape> shapes = cuda::temporal_shapes(eq, R, fp64);
    for (int si = 0; si < int(shapes.size()); ++si) {
      const StencilProblem p = problem(eq, R, 150, 41, 19, bc);
      const double dt = stable_dt(p, 0.5);
      const int T_ = shapes[si].max_steps, steps = 2 * T_ + 1;
      auto run = [&](auto tag) {
        using T = decltype(tag);
        auto eng = make_stencil_cuda(strategy(Backend::Cuda, fp64 ? Precision::Fp64 : Precision::Fp32), p);
        TemporalStencil<T> tmp(p, dt);
        for (int f = 0; f < tmp.fields(); ++f) {
          const std::vector<double> v = random_initial_field(p, f, 3);
          eng->upload(f, v);
          tmp.upload(f, v);
        }
        for (int s = 0; s < steps; ++s) eng->step(dt);
        cuda::TemporalOptions opt;
        opt.shape = si;
        tmp.advance(steps, T_, opt);
        expect_match(p, *eng, tmp,
                     label(p, fp64) + ", shape " + std::to_string(shapes[si].block_y) + "," +
                         std::to_string(shapes[si].rows_per_thread) + "," + std::to_string(shapes[si].planes_ahead) +
                         " (" + tmp.record().kernel + ")");
      };
      if (fp64)
        run(double{});
      else
        run(float{});
    }
  }
}

// Several tiles in x and y and several z chunks (forced short, and the driver's choice) or, for
// heat at R = 1, blocks walking shares of the tiles' planes (13 blocks: shares of 2.5-3.8 tiles'
// planes, each starting mid-tile; 200: shares shorter than the pipeline's 2 T R planes), both
// boundaries: tile seams, chunk and share seams and the queue's rotation over many planes. 270
// points across (fp32, x halo 4: two tiles of 120 and 30 left) make the last column's tiles
// banded (3 bands of 10 vectors, 2 tiles over 100 rows: the second's first band partial, the
// others past the grid); 300 (60 left, 17 vectors) keeps whole tiles.
TEST(StencilTemporalShapes, ManyTilesAndChunksMatchTheEngine) {
  SKIP_WITHOUT_GPU();
  struct Split {
    int z_chunk, blocks;
  };
  for (Equation eq : {Equation::Heat, Equation::Wave})
    for (int R : {1, 2})
      for (Boundary bc : {Boundary::Periodic, Boundary::Fixed})
        for (const Split sp : {Split{16, 0}, Split{0, 0}, Split{0, 13}, Split{0, 200}}) {
          if (sp.blocks > 0 && !(eq == Equation::Heat && R == 1)) continue;
          const StencilProblem p = problem(eq, R, sp.z_chunk == 16 ? 300 : 270, sp.z_chunk == 16 ? 70 : 100, 90, bc);
          const double dt = stable_dt(p, 0.5);
          auto eng = make_stencil_cuda(strategy(Backend::Cuda, Precision::Fp32), p);
          TemporalStencil<float> tmp(p, dt);
          for (int f = 0; f < tmp.fields(); ++f) {
            const std::vector<double> v = random_initial_field(p, f, 11);
            eng->upload(f, v);
            tmp.upload(f, v);
          }
          const int T_ = cuda::temporal_shapes(eq, R, false).front().max_steps, steps = 2 * T_;
          for (int s = 0; s < steps; ++s) eng->step(dt);
          cuda::TemporalOptions opt;
          opt.z_chunk = sp.z_chunk, opt.blocks = sp.blocks;
          tmp.advance(steps, T_, opt);
          expect_match(p, *eng, tmp,
                       label(p, false) + ", z chunk " + std::to_string(sp.z_chunk) + ", blocks " +
                           std::to_string(sp.blocks) + " (" + tmp.record().kernel + ")");
        }
}

// The record a pass fills: a stable name, the compulsory bytes of T single steps, the bytes it
// moves (at least one read and one write of each field), flops and points of T steps.
TEST(StencilTemporalDriver, FillsTheCostModel) {
  SKIP_WITHOUT_GPU();
  const StencilProblem p = problem(Equation::Heat, 1, 200, 100, 50, Boundary::Periodic);
  TemporalStencil<float> tmp(p, stable_dt(p, 0.5));
  tmp.upload(0, random_initial_field(p, 0, 1));
  cuda::TemporalOptions one_chunk;
  one_chunk.z_chunk = p.nz;  // the re-read planes of many short chunks would dominate this small grid
  // 3 steps: the default shape (fp32, R = 1: 16 x 2 fusing at most 3), named without its shape.
  const int T_ = tmp.pass(3, one_chunk);
  ASSERT_EQ(T_, 3);
  const KernelRecord& r = tmp.record();
  const double pts = double(p.points());
  EXPECT_EQ(r.kernel, "stencil_heat_temporal_r1_t3");
  EXPECT_DOUBLE_EQ(r.bytes_compulsory, 3 * stencil_compulsory_bytes(p, sizeof(float)));
  EXPECT_DOUBLE_EQ(r.work, 3 * pts);
  EXPECT_DOUBLE_EQ(r.flops, 3 * stencil_flops_per_point(p) * pts);
  EXPECT_EQ(r.work_unit, "points");
  EXPECT_GE(r.bytes_modelled, 2 * pts * sizeof(float));
  EXPECT_LT(r.bytes_modelled, 4 * pts * sizeof(float)) << "halo re-reads beyond the model's reach";
  // Blocks sharing the 2 x 4 tiles' 50 planes: 4 blocks walk two whole tiles each, the planes of
  // one chunk per tile; 3 blocks start two segments mid-tile, each streaming 2 T R planes more.
  const double one_chunk_bytes = r.bytes_modelled;
  cuda::TemporalOptions shares;
  shares.blocks = 4;
  tmp.pass(3, shares);
  EXPECT_DOUBLE_EQ(tmp.record().bytes_modelled, one_chunk_bytes);
  shares.blocks = 3;
  tmp.pass(3, shares);
  EXPECT_GT(tmp.record().bytes_modelled, one_chunk_bytes);
  // A banded last column (150 across: 30 left, 3 bands of 10 vectors) loads what the tiles of its
  // bands would: the same bytes with and without bands, one chunk a tile.
  {
    const StencilProblem q = problem(Equation::Heat, 1, 150, 100, 50, Boundary::Periodic);
    TemporalStencil<float> nar(q, stable_dt(q, 0.5));
    nar.upload(0, random_initial_field(q, 0, 1));
    cuda::TemporalOptions o = one_chunk;
    nar.pass(3, o);
    const double banded = nar.record().bytes_modelled;
    o.bands = 1;
    nar.pass(3, o);
    EXPECT_DOUBLE_EQ(nar.record().bytes_modelled, banded);
  }
  // 4 steps: the first shape that fuses 4 (12 x 2), named with its shape.
  ASSERT_EQ(tmp.pass(4, one_chunk), 4);
  EXPECT_EQ(tmp.record().kernel, "stencil_heat_temporal_r1_t4_by12_ry2_p2");
  EXPECT_DOUBLE_EQ(tmp.record().bytes_compulsory, 4 * stencil_compulsory_bytes(p, sizeof(float)));
  // The default step count at R = 1 on a grid larger than half the L2 (the L2 rule caps at 2): 4,
  // clamped by the default shape (fp32 and heat fp64: 16 x 2 fusing 3; the fp64 wave: 8 x 4 of 4).
  const DeviceInfo d = query_device();
  const StencilProblem big = problem(Equation::Heat, 1, 512, 512, 512, Boundary::Periodic);
  if (std::size_t(big.points()) * 4 * 2 > d.l2_bytes) {
    EXPECT_EQ(cuda::temporal_default_steps(Equation::Heat, 1, false, 512, 512, 512), 3);
    EXPECT_EQ(cuda::temporal_default_steps(Equation::Heat, 1, true, 512, 512, 512), 3);
    EXPECT_EQ(cuda::temporal_default_steps(Equation::Wave, 1, true, 512, 512, 512), 4);
    // The wave in fp32: 12 x 2 fusing 4 where the memory is not deep (an H100), else 16 x 2's 3.
    EXPECT_EQ(cuda::temporal_default_steps(Equation::Wave, 1, false, 512, 512, 512), deep_memory(d.l2_bytes) ? 3 : 4);
  }
  EXPECT_EQ(cuda::temporal_default_steps(Equation::Heat, 4, false, 512, 512, 512), 2);
}

TEST(StencilTemporalDriver, RefusesWhatItCannotDo) {
  SKIP_WITHOUT_GPU();
  const StencilProblem p = problem(Equation::Heat, 2, 40, 30, 20, Boundary::Periodic);
  TemporalStencil<float> tmp(p, stable_dt(p, 0.5));
  tmp.upload(0, random_initial_field(p, 0, 1));
  // More steps than any shape fuses (a pass takes the first shape that fuses those asked for).
  const int tmax = cuda::temporal_max_steps(Equation::Heat, 2, false);
  ASSERT_EQ(tmax, 3);  // the 12 x 2 shape; the default 16 x 2 fuses 2
  EXPECT_THROW(tmp.pass(tmax + 1), Error);
  EXPECT_NO_THROW(tmp.pass(tmax));
  cuda::TemporalOptions opt;
  opt.shape = 99;
  EXPECT_THROW(tmp.pass(1, opt), Error);
  EXPECT_TRUE(cuda::temporal_shapes(Equation::GrayScott, 2, false).empty());
  // Neighbour planes fewer than T R, or on one side only of a periodic grid.
  opt = {};
  opt.z_below = opt.z_above = 2 * 2 - 1;
  EXPECT_THROW(tmp.pass(2, opt), Error);
  opt.z_below = 4, opt.z_above = 0;
  EXPECT_THROW(tmp.pass(2, opt), Error);
  // Two ways of sharing the work asked at once; shares of a pass not built to walk them (R = 2).
  opt = {};
  opt.z_chunk = 5, opt.blocks = 3;
  EXPECT_THROW(tmp.pass(2, opt), Error);
  opt.z_chunk = 0;
  EXPECT_THROW(tmp.pass(2, opt), Error);
  // A band count from the environment that is not one.
  for (const char* bad : {"0", "33", "3x"}) {
    ::setenv(env::kTemporalBands, bad, 1);
    EXPECT_THROW(tmp.pass(2), Error) << bad;
  }
  ::unsetenv(env::kTemporalBands);
  EXPECT_NO_THROW(tmp.pass(2));
  // In place: the output is the input.
  DeviceGrid<float> g(40, 30, 20, 2);
  const GridView<float> v[2] = {g.view(), g.view()};
  const StencilCoeffs<float> co = make_laplacian_coeffs<float>(2, 1, 1, 1);
  KernelRecord rec;
  EXPECT_THROW(cuda::launch_stencil_temporal<float>(Equation::Heat, 2, v, v, co, {}, Boundary::Periodic, nullptr,
                                                    nullptr, rec, {}),
               Error);
}

// ---- benchmark -----------------------------------------------------------------------------------
// TIERSIM_BENCH_TEMPORAL=1 ./build/tests/tiersim_gpu_tests --gtest_filter='StencilTemporalBench.*'
// (TIERSIM_BENCH_TEMPORAL_N=n for another size). Periodic boundaries, constant coefficients. The
// single-step figure is the engine's update kernel alone (median of its CUDA-event times); the
// halo fill it needs every step is shown beside it. Temporal: every shape and T, median of the
// pass over CUDA events, per step = pass / T.
double median_of(std::vector<double> v) { return median(std::move(v)); }

// Fast random fill for 512^3 fields (values in [0.5, 1.5), never zero).
std::vector<double> bench_field(std::int64_t n, std::uint64_t seed) {
  std::vector<double> v(static_cast<std::size_t>(n));
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = 0.5 + double(x >> 11) * (1.0 / 9007199254740992.0);
  }
  return v;
}

template <class T>
void bench_one(Equation eq, int R, int n, double copy_gbs) {
  const bool fp64 = std::is_same_v<T, double>;
  const StencilProblem p = problem(eq, R, n, n, n, Boundary::Periodic);
  const double dt = stable_dt(p, 0.5);
  const std::string what =
      std::string(name(eq)) + (fp64 ? " fp64" : " fp32") + " R=" + std::to_string(R) + " " + std::to_string(n) + "^3";
  std::vector<std::vector<double> > init;
  for (int f = 0; f < stencil_field_count(eq); ++f) init.push_back(bench_field(p.points(), 7 + f));

  // The single-step engine.
  double single_ms = 0, halo_ms = 0;
  std::string single_kernel;
  {
    auto eng = make_stencil_cuda(strategy(Backend::Cuda, fp64 ? Precision::Fp64 : Precision::Fp32), p);
    for (int f = 0; f < int(init.size()); ++f) eng->upload(f, init[f]);
    for (int s = 0; s < 3; ++s) eng->step(dt);
    (void)eng->take_records(true);
    for (int s = 0; s < 20; ++s) eng->step(dt);
    std::vector<double> upd, halo;
    for (const KernelRecord& r : eng->take_records(true)) {
      if (r.kernel.starts_with("stencil_halo"))
        halo.push_back(r.ms);
      else
        upd.push_back(r.ms), single_kernel = r.kernel;
    }
    single_ms = median_of(upd), halo_ms = median_of(halo);
  }

  // The temporal passes: every shape, every T.
  TemporalStencil<T> tmp(p, dt);
  for (int f = 0; f < int(init.size()); ++f) tmp.upload(f, init[f]);
  const std::vector<cuda::TemporalShape> shapes = cuda::temporal_shapes(eq, R, fp64);
  const int tdef = cuda::temporal_default_steps(eq, R, fp64, n, n, n);
  cudaEvent_t ev[2];
  for (auto& e : ev) TIERSIM_CUDA_CHECK(cudaEventCreate(&e));
  for (int si = 0; si < int(shapes.size()); ++si)
    for (int T_ = 1; T_ <= shapes[si].max_steps; ++T_) {
      cuda::TemporalOptions opt;
      opt.shape = si;
      std::vector<double> ms;
      for (int rep = 0; rep < 13; ++rep) {
        TIERSIM_CUDA_CHECK(cudaEventRecord(ev[0], nullptr));
        tmp.launch(T_, opt);
        TIERSIM_CUDA_CHECK(cudaEventRecord(ev[1], nullptr));
        TIERSIM_CUDA_CHECK(cudaEventSynchronize(ev[1]));
        float t = 0;
        TIERSIM_CUDA_CHECK(cudaEventElapsedTime(&t, ev[0], ev[1]));
        if (rep >= 3) ms.push_back(t);  // 3 warm-up passes
      }
      const double pass_ms = median_of(ms), step_ms = pass_ms / T_;
      const KernelRecord& r = tmp.record();
      const double equiv_gbs = r.bytes_compulsory / (pass_ms * 1e-3) / 1e9;
      const double moved_gbs = r.bytes_modelled / (pass_ms * 1e-3) / 1e9;
      std::printf(
          "temporal | %s | shape %d,%d,%d%s T=%d%s | %s | pass %.4f ms | %.4f ms/step %.0f steps/s | single %s %.4f ms "
          "%.0f "
          "steps/s (+halo %.4f ms) | speedup %.2fx (%.2fx vs step with halo) | %.0f GB/s equivalent = %.2fx copy | "
          "moves "
          "%.0f GB/s\n",
          what.c_str(), shapes[si].block_y, shapes[si].rows_per_thread, shapes[si].planes_ahead, si == 0 ? "*" : "", T_,
          si == 0 && T_ == tdef ? " (default)" : "", r.kernel.c_str(), pass_ms, step_ms, 1e3 / step_ms,
          single_kernel.c_str(), single_ms, 1e3 / single_ms, halo_ms, single_ms / step_ms,
          (single_ms + halo_ms) / step_ms, equiv_gbs, copy_gbs > 0 ? equiv_gbs / copy_gbs : 0.0, moved_gbs);
      std::fflush(stdout);
    }
  for (auto& e : ev) cudaEventDestroy(e);
}

TEST(StencilTemporalBench, StepsPerSecondAgainstTheSingleStepEngine) {
  const char* on = std::getenv("TIERSIM_BENCH_TEMPORAL");
  if (!on || std::string(on) != "1") GTEST_SKIP() << "set TIERSIM_BENCH_TEMPORAL=1 to time the passes at 512^3";
  SKIP_WITHOUT_GPU();
  int n = 512;
  if (const char* e = std::getenv("TIERSIM_BENCH_TEMPORAL_N")) n = std::max(16, std::atoi(e));
  const double copy = measure_device_copy_gbs();
  std::printf("temporal | device %s, copy kernel %.0f GB/s | * = default shape\n", query_device().name.c_str(), copy);
  struct Cfg {
    Equation eq;
    int R;
    bool fp64;
  };
  for (const Cfg c : {Cfg{Equation::Heat, 1, false}, Cfg{Equation::Heat, 2, false}, Cfg{Equation::Heat, 3, false},
                      Cfg{Equation::Heat, 4, false}, Cfg{Equation::Wave, 1, false}, Cfg{Equation::Wave, 2, false},
                      Cfg{Equation::Wave, 4, false}, Cfg{Equation::Heat, 1, true}, Cfg{Equation::Wave, 1, true},
                      Cfg{Equation::GrayScott, 1, false}}) {
    // The largest cube up to n that fits: the engine's grids and the passes' two sets.
    int m = n;
    const std::size_t scalar = c.fp64 ? 8 : 4;
    const int grids = 2 * stencil_field_count(c.eq) + 2 * stencil_field_count(c.eq);
    std::size_t free_b = 0, total_b = 0;
    TIERSIM_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    while (m > 64 && double(grids) * std::pow(m + 2 * c.R + 32.0, 3) * scalar > 0.8 * double(free_b)) m -= 32;
    if (c.fp64)
      bench_one<double>(c.eq, c.R, m, copy);
    else
      bench_one<float>(c.eq, c.R, m, copy);
  }
}

#endif  // TIERSIM_HAVE_CUDA

}  // namespace
