// What a restart reads: DIR/checkpoint.h5 (io/checkpoint.cpp) and DIR/telemetry.csv, cut back to
// the checkpoint's step (Telemetry::truncate_csv). A damaged file must be one line naming the file
// and the object or line, never a restart from wrong data.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "base/error.hpp"
#include "sim/telemetry.hpp"

namespace fs = std::filesystem;
using namespace tiersim;

namespace {

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::path(testing::TempDir()) / ("tiersim_restart_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

Checkpoint sample_checkpoint(std::size_t n) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> g(0.0, 1.0);
  Checkpoint c;
  c.step = 40;
  c.time = 0.4;
  c.model = "nbody";
  c.case_toml = "[run]\nmodel = \"nbody\"\ndt = 0.01\n";
  for (const char* name : {"position", "velocity", "acceleration"}) {
    std::vector<double> v(3 * n);
    for (double& x : v) x = g(rng);
    c.state.arrays.emplace_back(name, std::move(v));
  }
  c.state.scalars = {{"energy0", -0.25}, {"kicks", 40.0}};
  return c;
}

void expect_equal(const Checkpoint& a, const Checkpoint& b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.case_toml, b.case_toml);
  EXPECT_EQ(a.state.scalars, b.state.scalars);
  ASSERT_EQ(a.state.arrays.size(), b.state.arrays.size());
  for (const auto& [name, v] : b.state.arrays) EXPECT_EQ(a.state.array(name), v) << name;
}

std::string read_error(const fs::path& dir) {
  try {
    read_checkpoint(dir.string());
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// File offset of the (first) chunk of a dataset, through the HDF5 C API (H5Dget_chunk_info, 1.10.5).
haddr_t chunk_offset(const fs::path& file, const char* dataset) {
  const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  const hid_t sp = H5Dget_space(d);
  hsize_t offset[1];
  unsigned mask = 0;
  haddr_t addr = HADDR_UNDEF;
  hsize_t size = 0;
  EXPECT_GE(H5Dget_chunk_info(d, sp, 0, offset, &mask, &addr, &size), 0);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return addr;
}

void overwrite(const fs::path& file, std::uint64_t offset, const void* bytes, std::size_t n) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(std::streamoff(offset));
  f.write(static_cast<const char*>(bytes), std::streamsize(n));
}

}  // namespace

TEST(Checkpoint, RoundTripsExactlyWithChecksummedArrays) {
  const fs::path dir = fresh_dir("roundtrip");
  Checkpoint c = sample_checkpoint(100);
  c.state.arrays.emplace_back("empty", std::vector<double>{});
  c.state.arrays.emplace_back("long", std::vector<double>((1u << 20) + 3, 1.5));  // more than one chunk
  write_checkpoint(dir.string(), c);
  expect_equal(read_checkpoint(dir.string()), c);
  EXPECT_FALSE(fs::exists(dir / "checkpoint.h5.tmp"));

  const hid_t f = H5Fopen((dir / "checkpoint.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  for (const char* name : {"/state/position", "/state/long"}) {
    const hid_t d = H5Dopen2(f, name, H5P_DEFAULT);
    const hid_t dcpl = H5Dget_create_plist(d);
    unsigned flags = 0, config = 0;
    std::size_t nvalues = 0;
    char fname[64];
    EXPECT_GE(
        H5Pget_filter_by_id2(dcpl, H5Z_FILTER_FLETCHER32, &flags, &nvalues, nullptr, sizeof fname, fname, &config), 0)
        << name << " has no Fletcher32 filter";
    H5Pclose(dcpl);
    H5Dclose(d);
  }
  H5Fclose(f);
}

// A few bytes changed in an array's data: the read fails naming the file and the array (it
// restarted silently from the damaged values before the arrays had checksums).
TEST(Checkpoint, FlippedBytesInAnArrayAreDetected) {
  const fs::path dir = fresh_dir("flipped");
  write_checkpoint(dir.string(), sample_checkpoint(100));
  const fs::path file = dir / "checkpoint.h5";
  const haddr_t at = chunk_offset(file, "/state/velocity");
  ASSERT_NE(at, HADDR_UNDEF);
  const double bad = 12345.0;
  overwrite(file, at + 8 * 17, &bad, sizeof bad);
  const std::string m = read_error(dir);
  EXPECT_NE(m.find(file.string()), std::string::npos) << m;
  EXPECT_NE(m.find("/state/velocity"), std::string::npos) << m;
  EXPECT_NE(m.find("Fletcher32"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

// 8 bytes overwritten anywhere in the file: the read either fails with one line naming the file
// or, where the bytes were unused, returns exactly what was written. Never different values.
TEST(Checkpoint, OverwrittenBytesAnywhereFailOrChangeNothing) {
  const fs::path dir = fresh_dir("anywhere");
  const Checkpoint c = sample_checkpoint(20);
  write_checkpoint(dir.string(), c);
  const fs::path file = dir / "checkpoint.h5", pristine = dir / "pristine.h5";
  fs::copy_file(file, pristine);
  const std::uint64_t size = fs::file_size(pristine);
  int failed = 0;
  for (std::uint64_t at = 0; at + 8 <= size; at += 8) {
    fs::copy_file(pristine, file, fs::copy_options::overwrite_existing);
    const unsigned char junk[8] = {0xde, 0xad, 0xbe, 0xef, 0x01, 0x23, 0x45, 0x67};
    overwrite(file, at, junk, sizeof junk);
    try {
      const Checkpoint r = read_checkpoint(dir.string());
      SCOPED_TRACE("bytes " + std::to_string(at) + "..." + std::to_string(at + 7) + " overwritten, read without error");
      expect_equal(r, c);
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(file.string(), 0), 0u) << "at " << at << ": " << m;
      EXPECT_EQ(m.find('\n'), std::string::npos) << "at " << at << ": " << m;
      ++failed;
    }
  }
  EXPECT_GT(failed, int(size / 8 / 2)) << "most of the file is data or checksummed metadata";
}

// Checkpoints written before the checksums (contiguous arrays, the default file format) still read.
TEST(Checkpoint, ReadsCheckpointsWithoutChecksums) {
  const fs::path dir = fresh_dir("old");
  const Checkpoint c = sample_checkpoint(10);
  {
    const hid_t f = H5Fcreate((dir / "checkpoint.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    auto str_attr = [](hid_t obj, const char* name, const std::string& v) {
      const hid_t t = H5Tcopy(H5T_C_S1);
      H5Tset_size(t, v.size() + 1);
      const hid_t sp = H5Screate(H5S_SCALAR);
      const hid_t a = H5Acreate2(obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, t, v.c_str());
      H5Aclose(a);
      H5Sclose(sp);
      H5Tclose(t);
    };
    auto num_attr = [](hid_t obj, const char* name, hid_t type, const void* v) {
      const hid_t sp = H5Screate(H5S_SCALAR);
      const hid_t a = H5Acreate2(obj, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(a, type, v);
      H5Aclose(a);
      H5Sclose(sp);
    };
    const hid_t root = H5Gopen2(f, "/", H5P_DEFAULT);
    str_attr(root, "model", c.model);
    str_attr(root, "case", c.case_toml);
    num_attr(root, "step", H5T_NATIVE_INT64, &c.step);
    num_attr(root, "time", H5T_NATIVE_DOUBLE, &c.time);
    const hid_t state = H5Gcreate2(f, "state", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (const auto& [name, v] : c.state.scalars) num_attr(state, name.c_str(), H5T_NATIVE_DOUBLE, &v);
    for (const auto& [name, v] : c.state.arrays) {
      const hsize_t n = v.size();
      const hid_t sp = H5Screate_simple(1, &n, nullptr);
      const hid_t d = H5Dcreate2(state, name.c_str(), H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
      H5Dclose(d);
      H5Sclose(sp);
    }
    H5Gclose(state);
    H5Gclose(root);
    H5Fclose(f);
  }
  expect_equal(read_checkpoint(dir.string()), c);
}

// Something in /state that is not a readable array: one line naming it (a dangling link used to
// read as an array of -1 elements: "cannot create std::vector larger than max_size()").
TEST(Checkpoint, UnreadableArrayIsNamed) {
  const fs::path dir = fresh_dir("dangling");
  write_checkpoint(dir.string(), sample_checkpoint(10));
  const fs::path file = dir / "checkpoint.h5";
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(H5Lcreate_soft("/nowhere", f, "/state/ghost", H5P_DEFAULT, H5P_DEFAULT), 0);
    H5Fclose(f);
  }
  const std::string m = read_error(dir);
  EXPECT_EQ(m.rfind(file.string() + ": ", 0), 0u) << m;
  EXPECT_NE(m.find("/state/ghost"), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

// ---- telemetry.csv ------------------------------------------------------------------------------

namespace {
std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream f(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l);
  return out;
}
}  // namespace

// Rows through the checkpoint's step stay, later ones and a torn last line go (every row went:
// the row length was a constant that a new column had made wrong).
TEST(TelemetryCsv, TruncateKeepsTheRowsThroughTheStep) {
  const fs::path dir = fresh_dir("csv");
  const fs::path csv = dir / "telemetry.csv";
  Telemetry t("host", 10.0);
  for (std::int64_t step = 0; step <= 20; ++step) {
    KernelRecord r;
    r.kernel = "k";
    r.ms = 1.0;
    t.add(step, r);
  }
  t.write_csv(csv.string());
  std::ofstream(csv, std::ios::app) << "21,k,cpu/soa/fp32,1.5,10";  // killed mid-row
  Telemetry::truncate_csv(csv.string(), 10);
  const auto lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 1u + 11u);
  EXPECT_EQ(lines[0].rfind("step,kernel,", 0), 0u);
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].rfind(std::to_string(i - 1) + ",k,", 0), 0u) << lines[i];
}

TEST(TelemetryCsv, DamagedStepIsOneLineNamingFileAndLine) {
  const fs::path dir = fresh_dir("csv_damaged");
  const fs::path csv = dir / "telemetry.csv";
  Telemetry t("host", 10.0);
  for (std::int64_t step = 0; step < 3; ++step) t.add(step, KernelRecord{});
  t.write_csv(csv.string());
  auto lines = lines_of(csv);
  lines[2][0] = 'x';  // the row of step 1
  {
    std::ofstream f(csv, std::ios::trunc);
    for (const auto& l : lines) f << l << "\n";
  }
  try {
    Telemetry::truncate_csv(csv.string(), 10);
    FAIL() << "no error for a damaged row";
  } catch (const Error& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind(csv.string() + ":3: step 'x'", 0), 0u) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  }
  EXPECT_EQ(lines_of(csv), lines) << "the file is left as it was";
}
