// The stencil model's output read back through the HDF5 API: /fields/<name>/value as a
// [T][nz][ny][nx] time series with step, time, origin and spacing, values equal to the engine's.
#include <cmath>
#include <gtest/gtest.h>
#include <hdf5.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/snapshots.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"

using namespace tiersim;

namespace {
std::vector<double> read_doubles(hid_t file, const std::string& path, std::vector<hsize_t>* dims) {
  const hid_t d = H5Dopen2(file, path.c_str(), H5P_DEFAULT);
  EXPECT_GE(d, 0) << path;
  const hid_t s = H5Dget_space(d);
  dims->assign(std::size_t(H5Sget_simple_extent_ndims(s)), 0);
  H5Sget_simple_extent_dims(s, dims->data(), nullptr);
  hsize_t n = 1;
  for (hsize_t x : *dims) n *= x;
  std::vector<double> v(n);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Sclose(s);
  H5Dclose(d);
  return v;
}
std::vector<double> read_attr(hid_t file, const std::string& group, const char* name) {
  const hid_t g = H5Gopen2(file, group.c_str(), H5P_DEFAULT);
  const hid_t a = H5Aopen(g, name, H5P_DEFAULT);
  const hid_t s = H5Aget_space(a);
  std::vector<double> v(std::size_t(H5Sget_simple_extent_npoints(s)));
  H5Aread(a, H5T_NATIVE_DOUBLE, v.data());
  H5Sclose(s), H5Aclose(a), H5Gclose(g);
  return v;
}
}  // namespace

TEST(StencilOutput, GrayScottFieldsAreAGridTimeSeries) {
  const std::string text =
      "[run]\nmodel = \"stencil\"\ndt = 0.5\n[strategy]\nbackend = \"cpu\"\n[grid]\nnx = 12\nny = 10\nnz = 8\n"
      "length = 12.0\nhz = 1.5\n[stencil]\nequation = \"gray-scott\"\n";
  const Case c = Case::parse(text, "gs.toml");
  auto m = make_stencil_model(c, strategy_from_case(c));
  const auto dir = std::filesystem::temp_directory_path() / ("tiersim_stencil_out_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  {
    SnapshotFile out(dir.string(), RunInfo{text, "gs.toml", m->strategy_name(), m->name(), "test", "CPU"}, false);
    m->write_snapshot(out, 0, 0.0);
    out.write_observables(0, 0.0, m->observe());
    for (int s = 0; s < 3; ++s) m->step(0.5);
    m->write_snapshot(out, 3, 1.5);
    out.write_observables(3, 1.5, m->observe());
    out.commit();
  }
  const hid_t f = H5Fopen((dir / "snapshots.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  for (const char* name : {"U", "V"}) {
    const std::string g = std::string("/fields/") + name;
    std::vector<hsize_t> dims;
    const auto v = read_doubles(f, g + "/value", &dims);
    ASSERT_EQ(dims, (std::vector<hsize_t>{2, 8, 10, 12})) << name;
    const auto step = read_doubles(f, g + "/step", &dims);
    const auto time = read_doubles(f, g + "/time", &dims);
    EXPECT_EQ(step, (std::vector<double>{0, 3}));
    EXPECT_EQ(time, (std::vector<double>{0, 1.5}));
    EXPECT_EQ(read_attr(f, g, "spacing"), (std::vector<double>{1.0, 1.0, 1.5}));
    EXPECT_EQ(read_attr(f, g, "origin"), (std::vector<double>{0, 0, 0}));
    // The two snapshots differ (the reaction ran) and hold values in [0, 1].
    double diff = 0;
    for (std::size_t q = 0; q < v.size() / 2; ++q) {
      diff += std::fabs(v[q] - v[q + v.size() / 2]);
      ASSERT_GE(v[q], 0.0);
      ASSERT_LE(v[q], 1.0);
    }
    EXPECT_GT(diff, 0) << name;
  }
  std::vector<hsize_t> dims;
  const auto vmean = read_doubles(f, "/observables/v_mean/value", &dims);
  EXPECT_EQ(vmean.size(), 2u);
  H5Fclose(f);
  std::filesystem::remove_all(dir);
}
