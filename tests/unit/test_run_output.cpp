// The run loop end to end through the library (what `tiersim run` calls): the H5MD file's
// structure is checked with the HDF5 C API, the telemetry and effective case beside it.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/device_info.hpp"
#include "kernels/kernel_timing.hpp"
#include "kernels/physics/equations.hpp"
#include "sim/case.hpp"
#include "base/error.hpp"
#include "sim/run.hpp"

namespace fs = std::filesystem;
using namespace tiersim;

namespace {

std::string temp_dir(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("tiersim_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  return p.string();
}

std::string write_case(const std::string& dir, const std::string& text) {
  fs::create_directories(dir);
  const std::string path = dir + "/case.toml";
  std::ofstream(path) << text;
  return path;
}

// A quiet run of `case_path` into `out_dir`, with `--set` overrides.
RunOptions quiet_run(const std::string& case_path, const std::string& out_dir,
                     std::vector<std::string> overrides = {}) {
  RunOptions o;
  o.case_path = case_path;
  o.out_dir = out_dir;
  o.quiet = true;
  o.overrides = std::move(overrides);
  return o;
}

bool has_link(hid_t f, const char* path) { return H5Lexists(f, path, H5P_DEFAULT) > 0; }

std::vector<hsize_t> dims_of(hid_t f, const char* path) {
  const hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  if (d < 0) return {};
  const hid_t s = H5Dget_space(d);
  std::vector<hsize_t> dims(H5Sget_simple_extent_ndims(s));
  H5Sget_simple_extent_dims(s, dims.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return dims;
}

const char* kCase = R"([run]
model = "nbody"
steps = 10
dt = 0.01
snapshot_every = 5
diagnostics_every = 2
[strategy]
backend = "cpu"
layout = "aos"
[nbody]
count = 100
ic = "plummer"
)";

TEST(RunOutput, WritesH5mdXdmfTelemetryAndEffectiveCase) {
  const std::string base = temp_dir("run");
  const std::string case_path = write_case(base, kCase);
  RunOptions o = quiet_run(case_path, base + "/out", {"nbody.count=64"});
  ASSERT_EQ(run_case(o).exit_code, 0);

  for (const char* f : {"snapshots.h5", "snapshots.xmf", "telemetry.csv", "summary.json", "case.toml"})
    EXPECT_TRUE(fs::exists(o.out_dir + "/" + f)) << f;

  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t f = H5Fopen((o.out_dir + "/snapshots.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_TRUE(has_link(f, "/h5md"));
  EXPECT_GT(H5Aexists_by_name(f, "/h5md", "version", H5P_DEFAULT), 0);
  EXPECT_TRUE(has_link(f, "/h5md/author"));
  EXPECT_TRUE(has_link(f, "/h5md/creator"));
  EXPECT_TRUE(has_link(f, "/particles/all/box"));
  // Snapshots at steps 0, 5, 10: three frames of 64 bodies (the override took effect).
  EXPECT_EQ(dims_of(f, "/particles/all/position/value"), (std::vector<hsize_t>{3, 64, 3}));
  EXPECT_EQ(dims_of(f, "/particles/all/velocity/value"), (std::vector<hsize_t>{3, 64, 3}));
  EXPECT_EQ(dims_of(f, "/particles/all/position/step"), (std::vector<hsize_t>{3}));
  EXPECT_EQ(dims_of(f, "/particles/all/position/time"), (std::vector<hsize_t>{3}));
  EXPECT_TRUE(has_link(f, "/particles/all/mass"));
  EXPECT_TRUE(has_link(f, "/particles/all/id"));
  // Diagnostics at 0, 2, 4, 6, 8, 10.
  EXPECT_EQ(dims_of(f, "/observables/total_energy/value"), (std::vector<hsize_t>{6}));
  EXPECT_TRUE(has_link(f, "/parameters"));
  H5Fclose(f);

  // The stored effective case holds the override and reproduces the run.
  std::ifstream ec(o.out_dir + "/case.toml");
  std::stringstream ss;
  ss << ec.rdbuf();
  const Case stored = Case::parse(ss.str(), "stored");
  EXPECT_EQ(stored.get_int("nbody.count"), 64);
  EXPECT_EQ(stored.get_string("strategy.layout"), "aos");

  // One telemetry row per kernel per step: 10 steps x (2 kicks + drift + forces), plus the
  // initial force evaluation at step 0, plus the diagnostics at their cadence, each on its own
  // step: 0, 2, 4, 6, 8, 10. On those steps the force pass also sums the potential
  // (nbody_forces_potential), which the diagnostics (nbody_diagnostics) then read: no separate
  // potential pass (nbody_potential). The snapshot at step 5, between diagnostics, has its
  // non-finite check from the same reduction without the potential (nbody_finite_check). And one
  // write_output row (the output thread's file writes) per snapshot: 0, 5, 10.
  std::ifstream tel(o.out_dir + "/telemetry.csv");
  std::string line;
  int rows = -1;
  std::map<std::string, int> per_kernel;
  std::vector<long long> diagnostics_steps, fused_steps;
  while (std::getline(tel, line)) {
    if (++rows == 0) continue;
    const auto c1 = line.find(','), c2 = line.find(',', c1 + 1);
    const std::string kernel = line.substr(c1 + 1, c2 - c1 - 1);
    ++per_kernel[kernel];
    if (kernel == "nbody_diagnostics") diagnostics_steps.push_back(std::stoll(line.substr(0, c1)));
    if (kernel == "nbody_forces_potential") fused_steps.push_back(std::stoll(line.substr(0, c1)));
  }
  EXPECT_EQ(rows, 51);
  EXPECT_EQ(per_kernel, (std::map<std::string, int>{{"nbody_forces", 5},
                                                    {"nbody_forces_potential", 6},
                                                    {"nbody_kick", 20},
                                                    {"nbody_drift", 10},
                                                    {"nbody_diagnostics", 6},
                                                    {"nbody_finite_check", 1},
                                                    {"write_output", 3}}));
  EXPECT_EQ(diagnostics_steps, (std::vector<long long>{0, 2, 4, 6, 8, 10}));
  EXPECT_EQ(fused_steps, (std::vector<long long>{0, 2, 4, 6, 8, 10}));
  // Both ceilings of the roofline are measured and carried by every row and by summary.json.
  {
    std::ifstream t2(o.out_dir + "/telemetry.csv");
    std::string header, first;
    std::getline(t2, header);
    std::getline(t2, first);
    EXPECT_TRUE(header.ends_with(",copy_bandwidth_gbs,compute_ceiling_gflops")) << header;
    const double ceiling = std::stod(first.substr(first.rfind(',') + 1));
    EXPECT_GT(ceiling, 0.1) << first;
    EXPECT_NEAR(ceiling, measure_host_fma_gflops(false), 1e-5 * ceiling) << "the run is fp32 on the CPU";
    std::ifstream sj(o.out_dir + "/summary.json");
    std::stringstream ss2;
    ss2 << sj.rdbuf();
    EXPECT_NE(ss2.str().find("\"compute_ceiling_gflops\": "), std::string::npos);
  }
  fs::remove_all(base);
}

// run.telemetry_every = 4: rows only for steps 0, 4, 8 (each with its four kernels).
TEST(RunOutput, TelemetryEveryNthStepKeepsOnlyThoseSteps) {
  const std::string base = temp_dir("every");
  const std::string case_path = write_case(base, kCase);
  RunOptions o = quiet_run(case_path, base + "/out", {"nbody.count=32", "run.telemetry_every=4"});
  ASSERT_EQ(run_case(o).exit_code, 0);
  std::ifstream tel(o.out_dir + "/telemetry.csv");
  std::string line;
  std::getline(tel, line);
  std::map<long long, int> per_step;
  while (std::getline(tel, line)) ++per_step[std::stoll(line.substr(0, line.find(',')))];
  // step 0: the initial forces and diagnostics; then kick, drift, forces, kick and the
  // diagnostics per timed step (every 4th); the diagnostics' passes on every diagnostics step
  // (every 2nd) and the non-finite check before a snapshot (5), recorded whatever the cadence;
  // the output thread's file writes at every snapshot (0, 5, 10), which are not kernels and are
  // always recorded.
  EXPECT_EQ(per_step, (std::map<long long, int>{{0, 3}, {2, 1}, {4, 5}, {5, 2}, {6, 1}, {8, 5}, {10, 2}}));
  fs::remove_all(base);
}

TEST(RunOutput, RefusesToOverwriteWithoutForce) {
  const std::string base = temp_dir("overwrite");
  const std::string case_path = write_case(base, kCase);
  RunOptions o = quiet_run(case_path, base + "/out");
  ASSERT_EQ(run_case(o).exit_code, 0);
  const auto before = fs::last_write_time(o.out_dir + "/snapshots.h5");
  try {
    run_case(o);
    FAIL() << "second run into the same directory must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exists and is not empty (use --force"), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::last_write_time(o.out_dir + "/snapshots.h5"), before);
  o.force = true;
  EXPECT_EQ(run_case(o).exit_code, 0);
  fs::remove_all(base);
}

// --force replaces a tiersim run, never a directory holding anything tiersim did not write
// (`--out . --force` in a source tree, `--out ~ --force`).
TEST(RunOutput, ForceReplacesOnlyATiersimRun) {
  const std::string base = temp_dir("force");
  const std::string case_path = write_case(base, kCase);
  RunOptions o;
  o.case_path = case_path;
  o.quiet = true;
  o.force = true;
  auto refused = [&](const std::string& dir, const std::string& why) {
    try {
      o.out_dir = dir;
      run_case(o);
      ADD_FAILURE() << dir << ": --force must be refused";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("not replaced: --force replaces only an empty directory or a tiersim run"),
                std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  // The directory holding the case file: not a run.
  refused(base, "it holds no tiersim run (no .tiersim.lock)");
  EXPECT_TRUE(fs::exists(case_path));
  // A run with a file of the user's beside it.
  o.out_dir = base + "/out";
  ASSERT_EQ(run_case(o).exit_code, 0);
  std::ofstream(o.out_dir + "/notes.txt") << "mine";
  refused(base + "/out", "'notes.txt'");
  EXPECT_TRUE(fs::exists(o.out_dir + "/notes.txt"));
  EXPECT_TRUE(fs::exists(o.out_dir + "/snapshots.h5"));
  // Without it the run is replaced.
  fs::remove(base + "/out/notes.txt");
  o.out_dir = base + "/out";
  EXPECT_EQ(run_case(o).exit_code, 0);
  fs::remove_all(base);
}

TEST(RunOutput, BadCaseWritesNothing) {
  const std::string base = temp_dir("bad");
  const std::string case_path = write_case(base, std::string(kCase) + "softening = -1\n");
  RunOptions o = quiet_run(case_path, base + "/out");
  EXPECT_THROW(run_case(o), Error);
  EXPECT_FALSE(fs::exists(o.out_dir));
  fs::remove_all(base);
}

// A case that overflows at step 0 (valid keys, absurd values) is refused before the output
// directory exists, like a bad case file.
TEST(RunOutput, NonFiniteInitialStateWritesNothing) {
  const std::string base = temp_dir("absurd");
  const std::string case_path = write_case(base, kCase);
  RunOptions o = quiet_run(case_path, base + "/out", {"nbody.count=32", "nbody.total_mass=1e300"});
  try {
    run_case(o);
    ADD_FAILURE() << "a non-finite initial state must be refused";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("step 0: non-finite values in"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(o.out_dir));
  fs::remove_all(base);
}

// A NaN in a stencil field is reported under the field's name in the snapshots and the update
// kernel's telemetry name (CPU: stencil_<equation>_cpu), not "field0" and "stencil update".
TEST(RunOutput, StencilNanNamesTheFieldAndTheUpdateKernel) {
  const std::string base = temp_dir("stencil_nan");
  const std::string case_path = write_case(base, R"([run]
model = "stencil"
steps = 20
dt = 1e-4
snapshot_every = 5
diagnostics_every = 5
[strategy]
backend = "cpu"
[grid]
n = 12
)");
  struct Expect {
    const char* equation;
    const char* message;
  };
  // Snapshots every 5: step 15's diagnostics are taken at once; every 10: they are queued behind
  // the next steps (sim/run.cpp) and still name step 15 and the snapshot before it.
  for (const char* snap_every : {"5", "10"})
    for (const Expect& e :
         {Expect{"heat", "step 15: non-finite values in u["}, Expect{"wave", "step 15: non-finite values in u["},
          Expect{"gray-scott", "step 15: non-finite values in U["},
          Expect{"allen-cahn", "step 15: non-finite values in u["}}) {
      RunOptions o = quiet_run(
          case_path, base + "/out_" + e.equation + snap_every,
          {std::string("stencil.equation=\"") + e.equation + "\"", std::string("run.snapshot_every=") + snap_every});
      const std::string eq = kernel_tag(parse_equation(e.equation));
      const std::string kernel = "(kernel stencil_" + eq + "_cpu)";
      setenv("TIERSIM_INJECT_NAN_AT_STEP", "13", 1);
      try {
        run_case(o);
        ADD_FAILURE() << e.equation << ": the NaN must stop the run";
      } catch (const Error& err) {
        const std::string what = err.what();
        EXPECT_NE(what.find(e.message), std::string::npos) << what;
        EXPECT_NE(what.find(kernel), std::string::npos) << what;
        EXPECT_NE(what.find("last good snapshot at step 10"), std::string::npos) << what;
        EXPECT_EQ(what.find("field0"), std::string::npos) << what;
      }
      unsetenv("TIERSIM_INJECT_NAN_AT_STEP");
    }
  fs::remove_all(base);
}

}  // namespace
