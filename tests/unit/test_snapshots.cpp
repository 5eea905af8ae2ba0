// SnapshotFile writes an H5MD 1.1 index over one HDF5 file per step + snapshots.xmf. These tests write
// random bodies and fields and read everything back with the HDF5 C API (not through the writer's
// own readers), comparing exactly what was written.
//
// TIERSIM_SNAPSHOT_TEST_OUT=DIR keeps the files of the layout test in DIR (for trying readers).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <omp.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include "io/checkpoint.hpp"
#include "io/hdf5_library.hpp"
#include "io/restart_pruning.hpp"
#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"
#include "io/snapshot_readers.hpp"
#include "io/snapshots.hpp"
#include "io/state_parts.hpp"
#include "io/step_files.hpp"
#include "io/vtk_output.hpp"
#include "sim/telemetry.hpp"

namespace fs = std::filesystem;
using namespace tiersim;

namespace {

unsigned test_seed() {
  static const unsigned s = std::random_device{}();
  return s;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("tiersim_snap_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

Bodies random_bodies(std::size_t n, std::mt19937_64& rng) {
  std::normal_distribution<double> g(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.5, 2.0);
  Bodies b;
  b.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    b.pos[i] = {g(rng), g(rng), g(rng)};
    b.vel[i] = {g(rng), g(rng), g(rng)};
    b.acc[i] = {0, 0, 0};
    b.mass[i] = u(rng) / double(n);
  }
  return b;
}

RunInfo test_info() {
  return {"[run]\nmodel = \"nbody\"\nsteps = 20 # é\n",
          "cases/test.toml",
          "cpu/soa/fp32/shared",
          "nbody",
          "9.9.9",
          "CPU (2 OpenMP threads)"};
}

// ---- Small HDF5 readers (independent of the writer's helpers) -----------------------------------

struct File {
  hid_t id;
  explicit File(const std::string& p) {
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_file_locking(fapl, 0, 1);
    id = H5Fopen(p.c_str(), H5F_ACC_RDONLY, fapl);
    H5Pclose(fapl);
  }
  ~File() {
    if (id >= 0) H5Fclose(id);
  }
};

bool exists(hid_t f, const std::string& path) {
  // H5Oexists_by_name on each prefix: false rather than an error for a missing parent.
  std::string sofar;
  std::stringstream ss(path.substr(1));
  std::string part;
  while (std::getline(ss, part, '/')) {
    sofar += "/" + part;
    if (H5Lexists(f, sofar.c_str(), H5P_DEFAULT) <= 0) return false;
  }
  return true;
}

std::vector<hsize_t> dims_of(hid_t f, const std::string& path) {
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << path;
  hid_t s = H5Dget_space(d);
  std::vector<hsize_t> v(H5Sget_simple_extent_ndims(s));
  H5Sget_simple_extent_dims(s, v.data(), nullptr);
  H5Sclose(s);
  H5Dclose(d);
  return v;
}

template <class T>
std::vector<T> read_ds(hid_t f, const std::string& path, hid_t memtype) {
  std::vector<T> out;
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  if (d < 0) {
    ADD_FAILURE() << "cannot open " << path;
    return out;
  }
  hid_t s = H5Dget_space(d);
  out.resize(H5Sget_simple_extent_npoints(s));
  EXPECT_GE(H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), 0) << path;
  H5Sclose(s);
  H5Dclose(d);
  return out;
}

std::size_t type_size(hid_t f, const std::string& path) {
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  hid_t t = H5Dget_type(d);
  const std::size_t s = H5Tget_size(t);
  H5Tclose(t);
  H5Dclose(d);
  return s;
}

std::string str_attr(hid_t f, const std::string& obj, const std::string& name) {
  hid_t a = H5Aopen_by_name(f, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return "<missing>";
  hid_t t = H5Aget_type(a);
  std::string s(H5Tget_size(t), '\0');
  H5Aread(a, t, s.data());
  H5Tclose(t);
  H5Aclose(a);
  s.resize(std::strlen(s.c_str()));
  return s;
}

template <class T>
std::vector<T> num_attr(hid_t f, const std::string& obj, const std::string& name, hid_t memtype) {
  hid_t a = H5Aopen_by_name(f, obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0) return {};
  hid_t s = H5Aget_space(a);
  std::vector<T> v(H5Sget_simple_extent_npoints(s));
  H5Aread(a, memtype, v.data());
  H5Sclose(s);
  H5Aclose(a);
  return v;
}

std::string str_dataset(hid_t f, const std::string& path) {
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  if (d < 0) return "<missing>";
  hid_t t = H5Dget_type(d);
  std::string s(H5Tget_size(t), '\0');
  H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data());
  H5Tclose(t);
  H5Dclose(d);
  s.resize(std::strlen(s.c_str()));
  return s;
}

H5D_layout_t layout_of(hid_t f, const std::string& path) {
  hid_t d = H5Dopen2(f, path.c_str(), H5P_DEFAULT);
  hid_t p = H5Dget_create_plist(d);
  const H5D_layout_t l = H5Pget_layout(p);
  H5Pclose(p);
  H5Dclose(d);
  return l;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Every HDF DataItem in the .xmf.
struct XmfItem {
  std::string file, path, dims;
};
std::vector<XmfItem> xmf_items(const std::string& xmf) {
  std::vector<XmfItem> out;
  const std::regex re(R"re(<DataItem Dimensions="([0-9 ]+)"[^>]*Format="HDF">([^:<]+):([^<]+)</DataItem>)re");
  for (auto it = std::sregex_iterator(xmf.begin(), xmf.end(), re); it != std::sregex_iterator(); ++it)
    out.push_back({(*it)[2].str(), (*it)[3].str(), (*it)[1].str()});
  return out;
}

std::string step_file(std::int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "snapshots.d/step_%012lld.h5", static_cast<long long>(step));
  return buf;
}

std::string dims_text(const std::vector<hsize_t>& d) {
  std::string s;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (i) s += ' ';
    s += std::to_string(d[i]);
  }
  return s;
}

// The .xmf names only files and datasets that exist (files relative to the .xmf, no .tmp), with
// their shapes, and each one can be read.
void expect_xmf_resolves(const fs::path& dir) {
  const std::string xmf = slurp(dir / "snapshots.xmf");
  const auto items = xmf_items(xmf);
  EXPECT_FALSE(items.empty());
  for (const auto& it : items) {
    EXPECT_FALSE(it.file.ends_with(".tmp")) << it.file;
    File f((dir / it.file).string());
    ASSERT_GE(f.id, 0) << it.file;
    ASSERT_TRUE(exists(f.id, it.path)) << it.file << ":" << it.path;
    EXPECT_EQ(dims_text(dims_of(f.id, it.path)), it.dims) << it.path;
    const auto v = read_ds<double>(f.id, it.path, H5T_NATIVE_DOUBLE);
    EXPECT_FALSE(v.empty()) << it.path;
  }
}

int count(const std::string& s, const std::string& what) {
  int n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

}  // namespace

// ---- The layout, every value, both precisions -----------------------------------------------------

class SnapshotLayout : public testing::TestWithParam<bool> {};

TEST_P(SnapshotLayout, H5mdStructureAndValuesAsWritten) {
  const bool dp = GetParam();
  SCOPED_TRACE("seed " + std::to_string(test_seed()));
  std::mt19937_64 rng(test_seed() + dp);
  const char* keep = std::getenv("TIERSIM_SNAPSHOT_TEST_OUT");
  const fs::path dir = keep ? fs::path(keep) / (dp ? "fp64" : "fp32") : fresh_dir(dp ? "fp64" : "fp32");
  fs::remove_all(dir);

  const std::size_t n = 37;
  const std::vector<std::int64_t> steps{0, 10, 20};
  const std::vector<double> times{0.0, 0.125, 0.25};
  std::vector<Bodies> bodies;
  GridGeometry g;
  g.nx = 5;
  g.ny = 4;
  g.nz = 3;
  g.origin[0] = -1.0;
  g.origin[1] = 0.5;
  g.origin[2] = 2.0;
  g.spacing[0] = 0.25;
  g.spacing[1] = 0.5;
  g.spacing[2] = 0.75;
  const std::size_t cells = std::size_t(g.nx) * g.ny * g.nz;
  std::vector<std::vector<float>> u;
  std::vector<std::vector<double>> v;
  std::uniform_real_distribution<double> ud(-3, 3);
  Telemetry tel("host memory (test)", 12.5);
  {
    SnapshotFile out(dir.string(), test_info(), dp);
    for (std::size_t t = 0; t < steps.size(); ++t) {
      bodies.push_back(random_bodies(n, rng));
      if (t > 0) bodies.back().mass = bodies[0].mass;  // masses are time-independent
      out.write_observables(steps[t], times[t], {{"kinetic_energy", ud(rng)}, {"total/energy", ud(rng)}});
      out.write_particles(steps[t], times[t], bodies.back(), 4.0 + double(t));
      u.emplace_back(cells);
      v.emplace_back(cells);
      for (auto& x : u.back()) x = float(ud(rng));
      for (auto& x : v.back()) x = ud(rng);
      out.write_field(steps[t], times[t], "u", g, u.back().data());
      out.write_field(steps[t], times[t], "v", g, v.back().data());
      KernelRecord r;
      r.kernel = "nbody_forces_cpu_" + std::to_string(t);
      r.strategy = "cpu/soa";
      r.ms = 1.5 + double(t);
      r.bytes_compulsory = 1e6;
      r.work_unit = "interactions";
      tel.add(steps[t], r);
      out.commit();
    }
    out.write_telemetry(tel.rows(), tel.peak_gbs(), tel.peak_source());
    out.commit();
    EXPECT_EQ(out.last_particle_step(), 20);
  }

  File f((dir / "snapshots.h5").string());
  ASSERT_GE(f.id, 0);
  // /h5md
  EXPECT_EQ(num_attr<int>(f.id, "/h5md", "version", H5T_NATIVE_INT), (std::vector<int>{1, 1}));
  EXPECT_NE(str_attr(f.id, "/h5md/author", "name"), "<missing>");
  EXPECT_EQ(str_attr(f.id, "/h5md/creator", "name"), "tiersim");
  EXPECT_EQ(str_attr(f.id, "/h5md/creator", "version"), "9.9.9");
  // /parameters
  EXPECT_EQ(str_dataset(f.id, "/parameters/case"), test_info().case_toml);
  EXPECT_EQ(str_dataset(f.id, "/parameters/strategy"), "cpu/soa/fp32/shared");
  EXPECT_EQ(str_dataset(f.id, "/parameters/model"), "nbody");
  EXPECT_EQ(str_dataset(f.id, "/parameters/device"), "CPU (2 OpenMP threads)");
  EXPECT_EQ(str_dataset(f.id, "/parameters/case_source"), "cases/test.toml");
  // box
  EXPECT_EQ(num_attr<int>(f.id, "/particles/all/box", "dimension", H5T_NATIVE_INT), (std::vector<int>{3}));
  {
    hid_t a = H5Aopen_by_name(f.id, "/particles/all/box", "boundary", H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(a, 0);
    hid_t t = H5Aget_type(a);
    const std::size_t len = H5Tget_size(t);
    std::string buf(3 * len, '\0');
    H5Aread(a, t, buf.data());
    for (int k = 0; k < 3; ++k) {
      std::string one(buf.data() + k * len, len);
      one.resize(std::strlen(one.c_str()));
      EXPECT_EQ(one, "none");
    }
    H5Tclose(t);
    H5Aclose(a);
  }
  const auto edges = read_ds<double>(f.id, "/particles/all/box/edges/value", H5T_NATIVE_DOUBLE);
  ASSERT_EQ(edges.size(), 9u);
  for (int t = 0; t < 3; ++t)
    for (int k = 0; k < 3; ++k) EXPECT_EQ(edges[3 * t + k], 4.0 + t);
  // position, velocity: value[T][N][3], step, time
  for (const char* el : {"position", "velocity"}) {
    const std::string base = std::string("/particles/all/") + el;
    EXPECT_EQ(dims_of(f.id, base + "/value"), (std::vector<hsize_t>{3, n, 3})) << el;
    EXPECT_EQ(type_size(f.id, base + "/value"), dp ? 8u : 4u) << el;
    EXPECT_EQ(layout_of(f.id, base + "/value"), H5D_VIRTUAL);
    EXPECT_EQ(read_ds<std::int64_t>(f.id, base + "/step", H5T_NATIVE_INT64), steps);
    EXPECT_EQ(read_ds<double>(f.id, base + "/time", H5T_NATIVE_DOUBLE), times);
    const auto val = read_ds<double>(f.id, base + "/value", H5T_NATIVE_DOUBLE);
    ASSERT_EQ(val.size(), 3 * n * 3);
    for (std::size_t t = 0; t < 3; ++t)
      for (std::size_t i = 0; i < n; ++i) {
        const Vec3<double> w = std::string(el) == "position" ? bodies[t].pos[i] : bodies[t].vel[i];
        const double expect[3] = {w.x, w.y, w.z};
        for (int k = 0; k < 3; ++k) {
          const double want = dp ? expect[k] : double(float(expect[k]));
          ASSERT_EQ(val[(t * n + i) * 3 + k], want) << el << " t=" << t << " i=" << i << " k=" << k;
        }
      }
    // value[t] is the step file's array (one copy of the data, in the step file).
    for (std::size_t t = 0; t < 3; ++t) {
      File sf((dir / step_file(steps[t])).string());
      ASSERT_GE(sf.id, 0) << step_file(steps[t]);
      const std::string name = std::string("/particles/") + el;
      EXPECT_EQ(layout_of(sf.id, name), H5D_CONTIGUOUS) << name;
      EXPECT_EQ(dims_of(sf.id, name), (std::vector<hsize_t>{n, 3}));
      const auto row = read_ds<double>(sf.id, name, H5T_NATIVE_DOUBLE);
      ASSERT_EQ(row.size(), n * 3);
      for (std::size_t j = 0; j < n * 3; ++j) ASSERT_EQ(row[j], val[t * n * 3 + j]) << name << " " << j;
    }
  }
  // H5MD: velocity and box edges share position's step and time (hard links: the same object).
  for (const char* other : {"/particles/all/velocity/step", "/particles/all/box/edges/time"}) {
    H5O_info_t a, b;
    const std::string mine =
        std::string("/particles/all/position/") + (std::string(other).ends_with("step") ? "step" : "time");
    ASSERT_GE(H5Oget_info_by_name2(f.id, mine.c_str(), &a, H5O_INFO_BASIC, H5P_DEFAULT), 0);
    ASSERT_GE(H5Oget_info_by_name2(f.id, other, &b, H5O_INFO_BASIC, H5P_DEFAULT), 0);
    EXPECT_EQ(a.addr, b.addr) << other;
  }
  // mass, id
  const auto mass = read_ds<double>(f.id, "/particles/all/mass", H5T_NATIVE_DOUBLE);
  ASSERT_EQ(mass.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(mass[i], dp ? bodies[0].mass[i] : double(float(bodies[0].mass[i])));
  const auto id = read_ds<std::int64_t>(f.id, "/particles/all/id", H5T_NATIVE_INT64);
  ASSERT_EQ(id.size(), n);
  for (std::size_t i = 0; i < n; ++i) EXPECT_EQ(id[i], std::int64_t(i));
  // observables ('/' in a name becomes '_': each observable is one group)
  for (const char* ob : {"/observables/kinetic_energy", "/observables/total_energy"}) {
    EXPECT_EQ(read_ds<std::int64_t>(f.id, std::string(ob) + "/step", H5T_NATIVE_INT64), steps) << ob;
    EXPECT_EQ(read_ds<double>(f.id, std::string(ob) + "/time", H5T_NATIVE_DOUBLE), times) << ob;
    EXPECT_EQ(read_ds<double>(f.id, std::string(ob) + "/value", H5T_NATIVE_DOUBLE).size(), 3u) << ob;
  }
  // fields: value[T][nz][ny][nx], x fastest; the float field stays float, the double one double
  EXPECT_EQ(dims_of(f.id, "/fields/u/value"), (std::vector<hsize_t>{3, 3, 4, 5}));
  EXPECT_EQ(type_size(f.id, "/fields/u/value"), 4u);
  EXPECT_EQ(type_size(f.id, "/fields/v/value"), 8u);
  EXPECT_EQ(num_attr<double>(f.id, "/fields/u", "origin", H5T_NATIVE_DOUBLE), (std::vector<double>{-1.0, 0.5, 2.0}));
  EXPECT_EQ(num_attr<double>(f.id, "/fields/u", "spacing", H5T_NATIVE_DOUBLE), (std::vector<double>{0.25, 0.5, 0.75}));
  EXPECT_EQ(num_attr<int>(f.id, "/fields/u", "shape", H5T_NATIVE_INT), (std::vector<int>{5, 4, 3}));
  EXPECT_EQ(read_ds<std::int64_t>(f.id, "/fields/v/step", H5T_NATIVE_INT64), steps);
  const auto fu = read_ds<float>(f.id, "/fields/u/value", H5T_NATIVE_FLOAT);
  const auto fv = read_ds<double>(f.id, "/fields/v/value", H5T_NATIVE_DOUBLE);
  for (std::size_t t = 0; t < 3; ++t)
    for (std::size_t c = 0; c < cells; ++c) {
      ASSERT_EQ(fu[t * cells + c], u[t][c]);
      ASSERT_EQ(fv[t * cells + c], v[t][c]);
    }
  {
    File sf((dir / step_file(20)).string());
    EXPECT_EQ(read_ds<double>(sf.id, "/fields/v", H5T_NATIVE_DOUBLE), v[2]);
  }
  // Only complete step files, one per step, and no .tmp left behind.
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(dir / "snapshots.d")) files.push_back(e.path().filename().string());
  std::sort(files.begin(), files.end());
  EXPECT_EQ(files, (std::vector<std::string>{"step_000000000000.h5", "step_000000000010.h5", "step_000000000020.h5"}));
  EXPECT_FALSE(fs::exists(dir / "snapshots.h5.tmp"));
  // telemetry compound table
  {
    hid_t d = H5Dopen2(f.id, "/telemetry", H5P_DEFAULT);
    ASSERT_GE(d, 0);
    struct Row {
      std::int64_t step;
      char* kernel;
      double ms;
    };
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, H5T_VARIABLE);
    hid_t ct = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(ct, "step", HOFFSET(Row, step), H5T_NATIVE_INT64);
    H5Tinsert(ct, "kernel", HOFFSET(Row, kernel), str);
    H5Tinsert(ct, "ms", HOFFSET(Row, ms), H5T_NATIVE_DOUBLE);
    hid_t s = H5Dget_space(d);
    ASSERT_EQ(H5Sget_simple_extent_npoints(s), 3);
    Row rows[3];
    ASSERT_GE(H5Dread(d, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(rows[t].step, steps[t]);
      EXPECT_EQ(std::string(rows[t].kernel), "nbody_forces_cpu_" + std::to_string(t));
      EXPECT_EQ(rows[t].ms, 1.5 + t);
    }
    H5Dvlen_reclaim(ct, s, H5P_DEFAULT, rows);
    H5Sclose(s);
    H5Tclose(ct);
    H5Tclose(str);
    H5Dclose(d);
  }

  // snapshots.xmf: two temporal collections (particles, fields), 3 grids each, every item resolves.
  const std::string xmf = slurp(dir / "snapshots.xmf");
  EXPECT_EQ(count(xmf, "CollectionType=\"Temporal\""), 2);
  EXPECT_EQ(count(xmf, "TopologyType=\"Polyvertex\""), 3);
  EXPECT_EQ(count(xmf, "TopologyType=\"3DCoRectMesh\" Dimensions=\"3 4 5\""), 3);
  EXPECT_NE(xmf.find(">2 0.5 -1</DataItem>"), std::string::npos) << "origin in z y x order";
  EXPECT_NE(xmf.find(">0.75 0.5 0.25</DataItem>"), std::string::npos) << "spacing in z y x order";
  EXPECT_NE(xmf.find("<Time Value=\"0.125\"/>"), std::string::npos);
  EXPECT_EQ(xmf.find("HyperSlab"), std::string::npos);
  const auto items = xmf_items(xmf);
  // particles: connectivity (ids), position, velocity, mass, id; fields: u, v
  EXPECT_EQ(items.size(), 3u * 5 + 3u * 2);
  expect_xmf_resolves(dir);
  EXPECT_FALSE(fs::exists(dir / "snapshots.xmf.tmp"));

  // The library's own reader agrees.
  const ParticleSnapshot ps = read_particles(dir.string(), 10);
  EXPECT_EQ(ps.step, 10);
  EXPECT_EQ(ps.time, 0.125);
  for (std::size_t i = 0; i < n; ++i)
    EXPECT_EQ(ps.bodies.pos[i].y, dp ? bodies[1].pos[i].y : double(float(bodies[1].pos[i].y)));
  const FieldSnapshot fsn = read_field(dir.string(), "v");
  EXPECT_EQ(fsn.step, 20);
  EXPECT_EQ(fsn.values, v[2]);
  EXPECT_EQ(fsn.geometry.nx, 5);
  EXPECT_EQ(read_run_info(dir.string()).case_toml, test_info().case_toml);
  EXPECT_EQ(particle_steps(dir.string()), steps);
}

INSTANTIATE_TEST_SUITE_P(Precision, SnapshotLayout, testing::Values(false, true),
                         [](const auto& p) { return p.param ? "fp64" : "fp32"; });

// ---- Refusals and errors ----------------------------------------------------------------------------

// A large write paced for the disk (Hdf5Calls::writeback, every writeback_every bytes): the field
// goes in slabs of whole planes, the last one partial, and reads back exactly as written (random
// values, both precisions).
TEST(Snapshots, PacedWritesGoInSlabsAndReadBackExactly) {
  const fs::path dir = fresh_dir("paced");
  fs::create_directories(dir);
  std::mt19937_64 rng(31);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const std::vector<hsize_t> d = {7, 5, 3};  // 7 planes of 15 values
  auto check = [&](auto zero, hid_t filetype, hid_t memtype, const char* tag) {
    using T = decltype(zero);
    std::vector<T> v(7 * 5 * 3);
    for (T& x : v) x = T(u(rng));
    const std::string path = (dir / (std::string(tag) + ".h5")).string();
    const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    Hdf5Calls h5{path, path};
    h5.writeback_every = 2 * 5 * 3 * sizeof(T) + 1;  // slabs of 2 planes: 2, 2, 2, 1
    h5.write_fixed(f, "u", filetype, memtype, d, v.data());
    ASSERT_GE(H5Fclose(f), 0);
    const hid_t g = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    ASSERT_GE(g, 0);
    const hid_t ds = H5Dopen2(g, "u", H5P_DEFAULT);
    std::vector<T> back(v.size(), T(7));
    EXPECT_GE(H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
    const hid_t sp = H5Dget_space(ds);
    hsize_t dims[3] = {0, 0, 0};
    EXPECT_EQ(H5Sget_simple_extent_dims(sp, dims, nullptr), 3);
    EXPECT_EQ(std::vector<hsize_t>(dims, dims + 3), d) << tag;
    H5Sclose(sp);
    H5Dclose(ds);
    H5Fclose(g);
    EXPECT_TRUE(back == v) << tag;
  };
  check(0.0f, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, "f32");
  check(0.0, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, "f64");
  fs::remove_all(dir);
}

// Bodies written in parts by three ranks, one of which owns none (random values, fp32): the index
// reads back one particle set, every value the one its rank wrote, masses and ids from the first
// snapshot; a rank without bodies is not named; parts of another precision are refused.
TEST(Snapshots, ParticlesInPartsReadBackAsOneSet) {
  const fs::path dir = fresh_dir("particle_parts");
  SnapshotFile s(dir.string(), test_info(), false);
  std::mt19937_64 rng(41);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  const std::vector<std::int64_t> first = {0, 0, 5}, count = {0, 5, 6};  // rank 0 owns none
  const std::size_t n = 11;
  std::vector<std::vector<float>> whole_pos, whole_vel;
  std::vector<float> mass;
  for (const std::int64_t step : {0, 10}) {
    std::vector<float> pos, vel;
    for (int r = 0; r < 3; ++r) {
      std::vector<float> p(3 * std::size_t(count[r])), v(p.size()), m(std::size_t(count[r]));
      for (float& x : p) x = u(rng);
      for (float& x : v) x = u(rng);
      for (float& x : m) x = 1.0f + std::fabs(u(rng));
      pos.insert(pos.end(), p.begin(), p.end());
      vel.insert(vel.end(), v.begin(), v.end());
      if (step == 0) mass.insert(mass.end(), m.begin(), m.end());
      write_state_part(dir.string(), step, r, first[r],
                       {{"position", p.data(), p.size(), false},
                        {"velocity", v.data(), v.size(), false},
                        {"mass", m.data(), m.size(), false}});
    }
    whole_pos.push_back(pos), whole_vel.push_back(vel);
    s.write_particles_parts(step, 0.01 * double(step), {first, count, false, 6.0});
    s.commit();
  }
  EXPECT_THROW(s.write_particles_parts(20, 0.2, {first, count, true, 6.0}), Error);  // fp64 in an fp32 run
  for (const std::size_t row : {0u, 1u}) {
    const ParticleSnapshot back = read_particles(dir.string(), std::int64_t(10 * row));
    ASSERT_EQ(back.bodies.size(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const auto& p = back.bodies.pos[i];
      const auto& v = back.bodies.vel[i];
      const float* wp = &whole_pos[row][3 * i];
      const float* wv = &whole_vel[row][3 * i];
      ASSERT_TRUE(p.x == wp[0] && p.y == wp[1] && p.z == wp[2]) << "row " << row << " body " << i;
      ASSERT_TRUE(v.x == wv[0] && v.y == wv[1] && v.z == wv[2]) << "row " << row << " body " << i;
      ASSERT_EQ(back.bodies.mass[i], double(mass[i])) << i;
    }
  }
  const StepFileContents c = read_step_file((dir / step_file_name(0)).string(), 0);
  EXPECT_TRUE(c.particles && c.mass_and_id);
  EXPECT_EQ(c.n_particles, n);
  {
    const std::string sp = (dir / step_file_name(10)).string();
    const Hdf5Calls h5{sp};
    Hdf5Handle f(H5Fopen(sp.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    Hdf5Handle d = h5.dataset(f, "/particles/position");
    const std::vector<std::string> parts = require_virtual_sources(d, sp, "/particles/position");
    ASSERT_EQ(parts.size(), 2u);  // ranks 1 and 2
    EXPECT_NE(parts[0].find(state_part_file(10, 1)), std::string::npos) << parts[0];
    EXPECT_NE(parts[1].find(state_part_file(10, 2)), std::string::npos) << parts[1];
  }
  // Rank 2's part of step 10 gone: the step file is refused naming it.
  fs::remove(dir / state_part_name(10, 2));
  try {
    read_step_file((dir / step_file_name(10)).string(), 10);
    ADD_FAILURE() << "a step file read with a part missing";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(state_part_file(10, 2) + ": missing"), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

// bytes_written() counts the files as placed: after each commit it has grown by the new step
// file and the index and collection files rewritten (the figure summary.json's bytes_written and
// the writer's GB/s come from), and a checkpoint reports its own file's size.
TEST(Snapshots, BytesWrittenAreTheFilesPlaced) {
  const fs::path dir = fresh_dir("bytes");
  SnapshotFile s(dir.string(), test_info(), false);
  const std::uint64_t start = s.bytes_written();
  GridGeometry g;
  g.nx = 9, g.ny = 7, g.nz = 5;
  std::vector<float> u(9 * 7 * 5, 0.25f);
  std::uint64_t total = start;
  for (std::int64_t step : {0, 10}) {
    s.write_field(step, 0.1 * double(step), "u", g, u.data());
    s.commit();
    total += file_bytes((dir / step_file_name(step)).string()) + file_bytes(s.h5_path()) + file_bytes(s.xmf_path());
    EXPECT_EQ(s.bytes_written(), total) << "after step " << step;
  }
  // The step file holds the field's 315 floats at least.
  EXPECT_GT(file_bytes((dir / step_file_name(10)).string()), 315u * sizeof(float));
  Checkpoint c;
  c.step = 10, c.model = "stencil/heat", c.case_toml = "[run]\n";
  c.state.arrays_f32.emplace_back("u", std::vector<float>(u.begin(), u.end()));
  const std::uint64_t written = write_checkpoint(dir.string(), c);
  EXPECT_EQ(written, file_bytes((dir / kCheckpointName).string()));
  fs::remove_all(dir);
}

TEST(Snapshots, ExistingRunIsNotOverwrittenWithoutForce) {
  const fs::path dir = fresh_dir("existing");
  { SnapshotFile a(dir.string(), test_info(), false); }
  try {
    SnapshotFile b(dir.string(), test_info(), false);
    FAIL() << "second writer on the same directory was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("snapshots.h5: already exists"), std::string::npos) << e.what();
  }
  SnapshotOptions o;
  o.overwrite = true;
  EXPECT_NO_THROW(SnapshotFile c(dir.string(), test_info(), o));
}

TEST(Snapshots, UnwritableDirectoryIsOneLineNamingIt) {
  // A directory below a regular file cannot be created, even by root.
  const fs::path base = fresh_dir("unwritable");
  fs::create_directories(base);
  std::ofstream(base / "file") << "x";
  const std::string dir = (base / "file" / "out").string();
  try {
    SnapshotFile s(dir, test_info(), false);
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(dir), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
}

TEST(Snapshots, InconsistentWritesAreRefused) {
  std::mt19937_64 rng(test_seed());
  const fs::path dir = fresh_dir("inconsistent");
  SnapshotFile s(dir.string(), test_info(), false);
  s.write_particles(5, 0.5, random_bodies(10, rng), 1);
  EXPECT_THROW(s.write_particles(5, 0.5, random_bodies(10, rng), 1), Error);  // same step again
  EXPECT_THROW(s.write_particles(6, 0.6, random_bodies(11, rng), 1), Error);  // other N
  GridGeometry g;
  g.nx = g.ny = g.nz = 2;
  std::vector<float> d(8, 1.0f);
  s.write_field(5, 0.5, "u", g, d.data());
  g.nx = 3;
  std::vector<float> d2(12, 1.0f);
  EXPECT_THROW(s.write_field(6, 0.6, "u", g, d2.data()), Error);
}

// Disk full / quota: the first failing HDF5 write becomes one line with the file and the reason.
// RLIMIT_FSIZE makes write() fail with EFBIG ("File too large"), as ENOSPC would, without a small disk.
// The child ends with exit(), as the CLI does: HDF5 1.10's own exit handler closed the failed file
// a second time and crashed (SIGSEGV) after the error was reported.
TEST(Snapshots, WriteFailureIsOneLineNamingTheFile) {
  const fs::path dir = fresh_dir("full");
  const std::string msg_file =
      (fs::path(testing::TempDir()) / ("tiersim_full_msg_" + std::to_string(::getpid()))).string();
  fs::remove(msg_file);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    rlimit r{256 * 1024, 256 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &r);
    std::string message = "no error";
    try {
      std::mt19937_64 rng(1);
      SnapshotFile s(dir.string(), test_info(), true);
      const Bodies b = random_bodies(12000, rng);  // 2 x 288 kB per step file
      for (int t = 0; t < 100; ++t) {
        s.write_particles(t, t, b, 1);
        s.commit();
      }
    } catch (const Error& e) {
      message = e.what();
    } catch (...) {
      message = "other exception";
    }
    std::ofstream(msg_file) << message;
    std::exit(0);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status)) << "child died at exit (signal " << WTERMSIG(status) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0);
  const std::string m = slurp(msg_file);
  EXPECT_NE(m.find((dir / "snapshots.d" / "step_000000000000.h5").string()), std::string::npos) << m;
  EXPECT_NE(m.find("File too large"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  // The failed step is not published and its .tmp is gone; the index of what was complete (none
  // here: the constructor's empty commit) stays readable.
  EXPECT_FALSE(fs::exists(dir / "snapshots.d" / "step_000000000000.h5"));
  EXPECT_FALSE(fs::exists(dir / "snapshots.d" / "step_000000000000.h5.tmp"));
  File f((dir / "snapshots.h5").string());
  EXPECT_GE(f.id, 0);
}

// ---- Crash safety: kill -9 at random moments leaves a readable file and an .xmf that resolves ----------

TEST(Snapshots, KilledWriterLeavesReadableSnapshots) {
  SCOPED_TRACE("seed " + std::to_string(test_seed()));
  std::mt19937_64 rng(test_seed());
  const int trials = 12;
  int mid_run = 0;  // trials killed after the first data commit (the others test only the empty commit)
  for (int trial = 0; trial < trials; ++trial) {
    const fs::path dir = fresh_dir("killed_" + std::to_string(trial));
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // A forked child of a process whose OpenMP threads exist has none of them: its parallel
      // regions (the checksums of io/hdf5_library.hpp) run on this thread alone, else they wait
      // for threads that are not there.
      omp_set_num_threads(1);
      std::mt19937_64 r(trial);
      SnapshotFile s(dir.string(), test_info(), false);
      GridGeometry g;
      g.nx = 16;
      g.ny = 8;
      g.nz = 4;
      std::vector<float> field(16 * 8 * 4);
      for (std::int64_t t = 0;; ++t) {
        s.write_observables(t, 0.1 * t, {{"e", double(t)}});
        s.write_particles(t, 0.1 * t, random_bodies(500, r), 2.0);
        for (auto& x : field) x = float(t);
        s.write_field(t, 0.1 * t, "u", g, field.data());
        s.commit();
      }
    }
    // Start-up is not what is tested: most trials wait until the first data commit is visible
    // (the .xmf, renamed in after the index, lists the step-0 particles: the child is then in its
    // write loop) and kill at a random moment after it; every fourth kills at a random moment from
    // the start, which may land before, in or after the first commit. (Waiting only for the first
    // step file left too few trials past the first commit under AddressSanitizer: 5 of 12 once.)
    const auto first_commit_visible = [&dir] {
      const fs::path x = dir / "snapshots.xmf";
      return fs::exists(x) && count(slurp(x), "TopologyType=\"Polyvertex\"") > 0;
    };
    if (trial % 4 != 3)
      for (int i = 0; i < 5000 && !first_commit_visible(); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::microseconds(rng() % 60000));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!fs::exists(dir / "snapshots.xmf")) continue;  // killed before the constructor's empty commit
    SCOPED_TRACE("trial " + std::to_string(trial));
    File f((dir / "snapshots.h5").string());
    ASSERT_GE(f.id, 0) << "snapshots.h5 unreadable after kill -9";
    EXPECT_TRUE(exists(f.id, "/h5md/creator"));
    const std::string xmf = slurp(dir / "snapshots.xmf");
    const int listed = count(xmf, "TopologyType=\"Polyvertex\"");
    if (!exists(f.id, "/particles/all/position/step")) {
      // Killed between the constructor's commit (an index and an .xmf with no data) and the
      // first data commit: both must say so.
      EXPECT_EQ(listed, 0) << "the .xmf names particles the index does not hold";
      EXPECT_FALSE(exists(f.id, "/fields/u"));
      continue;
    }
    ++mid_run;
    const auto steps = read_ds<std::int64_t>(f.id, "/particles/all/position/step", H5T_NATIVE_INT64);
    const auto fsteps = read_ds<std::int64_t>(f.id, "/fields/u/step", H5T_NATIVE_INT64);
    // The .xmf is renamed in after the index: never ahead of it, behind by at most the commit
    // that was in flight (at the first data commit it may still be the constructor's, empty).
    EXPECT_LE(std::size_t(listed), steps.size());
    EXPECT_GE(std::size_t(listed) + 1, steps.size());
    EXPECT_EQ(dims_of(f.id, "/particles/all/position/value")[0], steps.size());
    const auto u = read_ds<float>(f.id, "/fields/u/value", H5T_NATIVE_FLOAT);
    ASSERT_EQ(u.size(), fsteps.size() * 16 * 8 * 4);
    for (std::size_t t = 0; t < fsteps.size(); ++t) ASSERT_EQ(u[t * 512], float(fsteps[t]));
    if (listed > 0) expect_xmf_resolves(dir);
    fs::remove_all(dir);
  }
  // The waiting trials (9 of 12) are killed in the write loop; allow a few to miss.
  EXPECT_GE(mid_run, 6) << "too few trials killed after the first data commit to test anything";
}

// ---- Restart: resume drops what came after the kept step and appends ----------------------------------

TEST(Snapshots, ResumeTruncatesAndAppends) {
  std::mt19937_64 rng(test_seed());
  const fs::path dir = fresh_dir("resume");
  GridGeometry g;
  g.nx = 3;
  g.ny = 2;
  g.nz = 2;
  std::vector<double> field(12);
  {
    SnapshotFile s(dir.string(), test_info(), true);
    Telemetry tel("host", 1.0);
    for (std::int64_t t = 0; t <= 40; t += 10) {
      s.write_observables(t, t * 0.01, {{"e", double(t)}});
      s.write_particles(t, t * 0.01, random_bodies(8, rng), 1.0);
      for (auto& x : field) x = double(t);
      s.write_field(t, t * 0.01, "phi", g, field.data());
      KernelRecord r;
      r.kernel = "k";
      tel.add(t, r);
      s.commit();
    }
    s.write_telemetry(tel.rows(), tel.peak_gbs(), tel.peak_source());
    s.commit();
  }
  const Bodies later = random_bodies(8, rng);
  {
    // Rebuilt from the step files alone: the index of the first writer is not read (it is removed
    // here). A checkpoint at step 25 would hold the observable of step 25; telemetry rows come
    // from telemetry.csv (here: by hand).
    fs::remove(dir / "snapshots.h5");
    SnapshotIndex kept = rebuild_index(dir.string(), RestartPoint{25, 20, {{"e", {{25}, {0.25}, {25.0}}}}});
    EXPECT_EQ(kept.info.case_toml, test_info().case_toml);
    EXPECT_EQ(kept.observables.at("e").step, (std::vector<std::int64_t>{0, 10, 20, 25}));
    for (std::int64_t t = 0; t <= 20; t += 10) kept.telemetry.push_back({t, "k", "", "", 0, 0, 0, 0, 0, false, 0, 0});
    auto s = SnapshotFile::resume(dir.string(), kept);
    EXPECT_EQ(s->last_particle_step(), 20);
    EXPECT_EQ(particle_steps(dir.string()), (std::vector<std::int64_t>{0, 10, 20}));
    EXPECT_EQ(count(slurp(dir / "snapshots.xmf"), "Polyvertex"), 3);
    s->write_observables(30, 0.3, {{"e", 30.5}});
    s->write_particles(30, 0.3, later, 1.0);
    for (auto& x : field) x = 30.5;
    s->write_field(30, 0.3, "phi", g, field.data());
    Telemetry tel("host", 1.0);
    KernelRecord r;
    r.kernel = "k2";
    tel.add(30, r);
    s->write_telemetry(tel.rows(), tel.peak_gbs(), tel.peak_source());
    s->commit();
  }
  File f((dir / "snapshots.h5").string());
  EXPECT_EQ(read_ds<std::int64_t>(f.id, "/particles/all/position/step", H5T_NATIVE_INT64),
            (std::vector<std::int64_t>{0, 10, 20, 30}));
  EXPECT_EQ(read_ds<std::int64_t>(f.id, "/particles/all/velocity/step", H5T_NATIVE_INT64).size(), 4u);
  EXPECT_EQ(dims_of(f.id, "/particles/all/box/edges/value")[0], 4u);
  EXPECT_EQ(read_ds<double>(f.id, "/observables/e/value", H5T_NATIVE_DOUBLE),
            (std::vector<double>{0, 10, 20, 25, 30.5}));
  EXPECT_EQ(read_ds<std::int64_t>(f.id, "/fields/phi/step", H5T_NATIVE_INT64),
            (std::vector<std::int64_t>{0, 10, 20, 30}));
  EXPECT_FALSE(fs::exists(dir / step_file(40)));  // dropped by the restart
  {
    File sf((dir / step_file(30)).string());
    const auto row3 = read_ds<double>(sf.id, "/particles/position", H5T_NATIVE_DOUBLE);
    ASSERT_EQ(row3.size(), 24u);
    for (int i = 0; i < 8; ++i) EXPECT_EQ(row3[3 * i], later.pos[i].x);
    EXPECT_EQ(read_ds<double>(sf.id, "/fields/phi", H5T_NATIVE_DOUBLE), field);
  }
  const auto pos = read_ds<double>(f.id, "/particles/all/position/value", H5T_NATIVE_DOUBLE);
  ASSERT_EQ(pos.size(), 4u * 24);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(pos[3 * 24 + 3 * i], later.pos[i].x);
  EXPECT_EQ(dims_of(f.id, "/telemetry")[0], 4u);  // steps 0, 10, 20 kept, 30 appended
  EXPECT_EQ(count(slurp(dir / "snapshots.xmf"), "Polyvertex"), 4);
  expect_xmf_resolves(dir);
}

// A step file deleted by hand: the library's readers name it; through the index its rows read as
// NaN (the virtual datasets' fill value), never as plausible zeros.
TEST(Snapshots, MissingStepFileIsNamedAndReadsAsNaN) {
  std::mt19937_64 rng(test_seed());
  const fs::path dir = fresh_dir("missing");
  GridGeometry g;
  g.nx = g.ny = g.nz = 2;
  std::vector<float> field(8, 1.5f);
  {
    SnapshotFile s(dir.string(), test_info(), false);
    for (std::int64_t t = 0; t < 3; ++t) {
      s.write_particles(t, t * 0.1, random_bodies(4, rng), 1.0);
      s.write_field(t, t * 0.1, "u", g, field.data());
      s.commit();
    }
  }
  fs::remove(dir / step_file(1));
  for (auto read :
       {+[](const std::string& d) { read_particles(d, 1); }, +[](const std::string& d) { read_field(d, "u", 1); }}) {
    try {
      read(dir.string());
      FAIL() << "no error for a missing step file";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(step_file(1)), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(read_particles(dir.string(), 2));
  File f((dir / "snapshots.h5").string());
  const auto u = read_ds<float>(f.id, "/fields/u/value", H5T_NATIVE_FLOAT);
  ASSERT_EQ(u.size(), 24u);
  EXPECT_EQ(u[0], 1.5f);
  EXPECT_TRUE(std::isnan(u[8]));
  EXPECT_EQ(u[16], 1.5f);
}

// A restart rebuilds the index only from step files of one run, each whole: a missing or damaged
// one, or one of another run, is an error naming it.
TEST(Snapshots, RebuildRefusesWhatIsNotTheRun) {
  const fs::path dir = fresh_dir("notarun");
  fs::create_directories(dir);
  EXPECT_THROW(rebuild_index(dir.string(), RestartPoint{0, 0, {}}), Error);  // no snapshots.d/
  fs::create_directories(dir / "snapshots.d");
  std::ofstream(dir / step_file(0)) << "not hdf5";
  auto error_of = [&](const RestartPoint& at) {
    try {
      rebuild_index(dir.string(), at);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error_of({0, 0, {}}).find(step_file(0) + ": cannot open as HDF5"), std::string::npos)
      << error_of({0, 0, {}});
  // A run of three snapshots; then each kind of damage in a copy.
  fs::remove_all(dir);
  std::mt19937_64 rng(test_seed());
  {
    SnapshotFile s(dir.string(), test_info(), false);
    for (std::int64_t t = 0; t <= 2; ++t) {
      s.write_observables(t, 0.1 * t, {{"e", 1.0 * t}});
      s.write_particles(t, 0.1 * t, random_bodies(4, rng), 1.0);
      s.commit();
    }
  }
  EXPECT_EQ(error_of({2, 2, {}}), "(no error)");
  EXPECT_NE(error_of({2, 3, {}}).find("after its own step"), std::string::npos);
  {
    // Another run's step file in place of step 1.
    const fs::path other = fresh_dir("otherrun");
    RunInfo info = test_info();
    info.case_toml += "# another\n";
    SnapshotFile s(other.string(), info, false);
    for (std::int64_t t = 0; t <= 1; ++t) {
      s.write_particles(t, 0.1 * t, random_bodies(4, rng), 1.0);
      s.commit();
    }
    fs::copy_file(dir / step_file(1), dir / "step1.bak");
    fs::copy_file(other / step_file(1), dir / step_file(1), fs::copy_options::overwrite_existing);
    EXPECT_NE(error_of({2, 2, {}}).find(step_file(1) + ": of another run"), std::string::npos) << error_of({2, 2, {}});
    fs::rename(dir / "step1.bak", dir / step_file(1));
  }
  // Cut short by a few bytes: HDF5 sees the file is shorter than its superblock says.
  fs::copy_file(dir / step_file(1), dir / "step1.bak");
  fs::resize_file(dir / step_file(1), fs::file_size(dir / step_file(1)) - 8);
  EXPECT_NE(error_of({2, 2, {}}).find(step_file(1) + ": cannot open as HDF5"), std::string::npos)
      << error_of({2, 2, {}});
  // Missing.
  fs::remove(dir / step_file(1));
  EXPECT_NE(error_of({2, 2, {}}).find(step_file(1) + ": missing"), std::string::npos) << error_of({2, 2, {}});
  fs::rename(dir / "step1.bak", dir / step_file(1));
  // One the chain does not name, up to the checkpoint.
  fs::copy_file(dir / step_file(1), dir / step_file(3));
  EXPECT_NE(error_of({3, 2, {}}).find(step_file(3) + ": a step file up to the checkpoint"), std::string::npos);
  EXPECT_EQ(error_of({2, 2, {}}), "(no error)");  // after the checkpoint: removed by the restart, not read
}

TEST(Snapshots, FormatList) {
  EXPECT_TRUE(parse_formats("xdmf").xdmf);
  EXPECT_FALSE(parse_formats("xdmf").vtk);
  EXPECT_THROW(parse_formats("xdmf,png"), Error);
  EXPECT_THROW(parse_formats(""), Error);
  if (vtk_output_available()) {
    const OutputFormats f = parse_formats("xdmf,vtk");
    EXPECT_TRUE(f.xdmf && f.vtk);
    EXPECT_FALSE(parse_formats("vtk").xdmf);
  } else {
    try {
      parse_formats("xdmf,vtk");
      FAIL();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("without VTK"), std::string::npos);
    }
  }
}
