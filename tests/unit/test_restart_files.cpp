// What a restart reads: DIR/checkpoint.h5 (io/checkpoint.cpp) and DIR/telemetry.csv, cut back to
// the checkpoint's step (Telemetry::read_csv_part, resume_csv). A damaged file must be one line naming the file
// and the object or line, never a restart from wrong data.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <thread>
#include <string>
#include <vector>

#include "io/checkpoint.hpp"
#include "io/hdf5_library.hpp"
#include "io/safe_files.hpp"
#include "io/snapshot_index.hpp"
#include "io/state_parts.hpp"
#include "io/step_files.hpp"
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
    HostArray<double> v(3 * n);
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

// An fp32 run's arrays are written as 32-bit floats (half the bytes) and read back as the same
// values in doubles, beside double arrays of the same checkpoint.
TEST(Checkpoint, Fp32ArraysAreWrittenAsFloatsAndReadBackExactly) {
  const fs::path dir = fresh_dir("fp32");
  Checkpoint c = sample_checkpoint(10);
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> field(2u << 20);  // two whole chunks (a last partial chunk is stored whole)
  for (float& x : field) x = u(rng);
  field[17] = 1.0f / 3.0f;  // not exact in fewer bits
  c.state.arrays_f32.emplace_back("field0", field);
  write_checkpoint(dir.string(), c);
  const Checkpoint back = read_checkpoint(dir.string());
  const HostArray<double>& got = back.state.array("field0");
  ASSERT_EQ(got.size(), field.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < field.size(); ++i) differ += got[i] != double(field[i]);
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(back.state.array("position"), c.state.array("position"));

  const hid_t f = H5Fopen((dir / "checkpoint.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t d = H5Dopen2(f, "/state/field0", H5P_DEFAULT);
  const hid_t t = H5Dget_type(d);
  EXPECT_EQ(H5Tget_class(t), H5T_FLOAT);
  EXPECT_EQ(H5Tget_size(t), 4u) << "an fp32 array written in more than 4 bytes a value";
  H5Tclose(t);
  H5Dclose(d);
  H5Fclose(f);
  // The file holds the floats, not doubles: under 5 bytes a value of the large array.
  EXPECT_LT(fs::file_size(dir / "checkpoint.h5"), 5 * field.size());
}

TEST(Checkpoint, RoundTripsExactlyWithChecksummedArrays) {
  const fs::path dir = fresh_dir("roundtrip");
  Checkpoint c = sample_checkpoint(100);
  c.state.arrays.emplace_back("empty", HostArray<double>{});
  c.state.arrays.emplace_back("long", HostArray<double>((1u << 20) + 3, 1.5));  // more than one chunk
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

namespace {

// Every stored chunk of `name` in `file`, as the file holds it (data and checksum).
std::vector<std::vector<unsigned char>> stored_chunks(hid_t file, const char* name) {
  const hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  const hid_t sp = H5Dget_space(d);
  hsize_t count = 0;
  EXPECT_GE(H5Dget_num_chunks(d, sp, &count), 0);
  std::vector<std::vector<unsigned char>> out;
  for (hsize_t i = 0; i < count; ++i) {
    hsize_t offset[1];
    unsigned mask = 0;
    haddr_t addr = HADDR_UNDEF;
    hsize_t size = 0;
    EXPECT_GE(H5Dget_chunk_info(d, sp, i, offset, &mask, &addr, &size), 0);
    std::vector<unsigned char> bytes(size);
    std::uint32_t filters = 0;
    EXPECT_GE(H5Dread_chunk(d, H5P_DEFAULT, offset, &filters, bytes.data()), 0);
    out.push_back(std::move(bytes));
  }
  H5Sclose(sp);
  H5Dclose(d);
  return out;
}

// `v` written by write_checked (checksums computed on the host's threads) and by HDF5's own
// Fletcher32 filter (H5Dwrite): the stored chunks must be the same bytes, and the read verifies them.
template <class T>
void expect_chunks_as_hdf5_stores_them(const fs::path& dir, const char* tag, hid_t type, const std::vector<T>& v) {
  const std::string path = (dir / (std::string(tag) + ".h5")).string();
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const Hdf5Calls h5{path};
  h5.write_checked(f, "ours", type, type, v);
  const hsize_t n = v.size(), chunk = std::min<hsize_t>(n, hsize_t(1) << 20);
  const hid_t sp = H5Screate_simple(1, &n, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, &chunk);
  H5Pset_fletcher32(dcpl);
  const hid_t d = H5Dcreate2(f, "filter", type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(sp);
  const auto ours = stored_chunks(f, "ours"), filter = stored_chunks(f, "filter");
  ASSERT_EQ(ours.size(), filter.size()) << tag;
  for (std::size_t i = 0; i < ours.size(); ++i) EXPECT_TRUE(ours[i] == filter[i]) << tag << ": chunk " << i;
  std::vector<T> back(v.size());
  const hid_t o = H5Dopen2(f, "ours", H5P_DEFAULT);
  EXPECT_GE(H5Dread(o, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);  // verifies the checksums
  H5Dclose(o);
  EXPECT_TRUE(back == v) << tag;
  H5Fclose(f);
}

}  // namespace

// The checkpoint's chunks, checksummed on the host's threads, are byte for byte what HDF5's
// Fletcher32 filter stores: random values, whole and partial last chunks, an odd number of
// bytes (the checksum's odd-byte rule), one value.
TEST(Checkpoint, ChecksummedChunksAreTheBytesHdf5sFilterStores) {
  const fs::path dir = fresh_dir("chunks");
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<float> u(-1e3f, 1e3f);
  std::vector<float> f((2u << 20) + 5);
  for (float& x : f) x = u(rng);
  expect_chunks_as_hdf5_stores_them(dir, "f32", H5T_NATIVE_FLOAT, f);
  std::vector<double> g((1u << 20) * 2);
  for (double& x : g) x = double(u(rng)) * 1e-7;
  expect_chunks_as_hdf5_stores_them(dir, "f64", H5T_NATIVE_DOUBLE, g);
  std::vector<std::uint8_t> b(1001);
  for (auto& x : b) x = std::uint8_t(rng());
  expect_chunks_as_hdf5_stores_them(dir, "u8_odd", H5T_NATIVE_UINT8, b);
  expect_chunks_as_hdf5_stores_them(dir, "one", H5T_NATIVE_INT64, std::vector<std::int64_t>{-7});
  std::vector<std::uint8_t> ones(999, 0xff);  // sums that fold to 0xffff
  expect_chunks_as_hdf5_stores_them(dir, "u8_ff", H5T_NATIVE_UINT8, ones);
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

// The restart record's observables (computed since the last snapshot) come back series for
// series; a series whose value array is shorter than its steps is refused with one line naming
// the file and the series.
TEST(Checkpoint, ObservablesSinceTheSnapshotRoundTripAndDisagreeingArraysAreRefused) {
  const fs::path dir = fresh_dir("observables");
  Checkpoint c = sample_checkpoint(10);
  c.record.present = true;
  c.record.last_snapshot_step = 30;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (const char* name : {"energy", "momentum_x"}) {
    ObservableSeries& s = c.record.observables_since_snapshot[name];
    for (std::int64_t step = 31; step <= 40; step += 3)
      s.step.push_back(step), s.time.push_back(0.01 * double(step)), s.value.push_back(u(rng));
  }
  write_checkpoint(dir.string(), c);
  const Checkpoint back = read_checkpoint(dir.string());
  ASSERT_TRUE(back.record.present);
  EXPECT_EQ(back.record.last_snapshot_step, 30);
  ASSERT_EQ(back.record.observables_since_snapshot.size(), 2u);
  for (const auto& [name, s] : c.record.observables_since_snapshot) {
    const ObservableSeries& b = back.record.observables_since_snapshot.at(name);
    EXPECT_EQ(b.step, s.step) << name;
    EXPECT_EQ(b.time, s.time) << name;
    EXPECT_EQ(b.value, s.value) << name;
  }

  const fs::path file = dir / "checkpoint.h5";
  {
    const hid_t f = H5Fopen(file.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    ASSERT_GE(H5Ldelete(f, "/observables/energy/value", H5P_DEFAULT), 0);
    const hsize_t n = 1;
    const double one = 1.0;
    const hid_t sp = H5Screate_simple(1, &n, nullptr);
    const hid_t d =
        H5Dcreate2(f, "/observables/energy/value", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, &one), 0);
    H5Dclose(d);
    H5Sclose(sp);
    H5Fclose(f);
  }
  const std::string m = read_error(dir);
  EXPECT_EQ(m, file.string() + ": /observables/energy: step, time and value disagree") << m;
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

// The part of telemetry.csv a checkpoint recorded comes back row for row; rows after it (written
// before a kill) and a torn last line go when the restart takes the part over.
TEST(TelemetryCsv, TheRecordedPartComesBackAndTheRestGoes) {
  const fs::path dir = fresh_dir("csv");
  const fs::path csv = dir / "telemetry.csv";
  Telemetry t("host", 10.0);
  std::uint64_t bytes = 0, fnv = 0;
  for (std::int64_t step = 0; step <= 20; ++step) {
    KernelRecord r;
    r.kernel = "k";
    r.strategy = "cpu/soa/fp32";
    r.ms = 1.0 + step;
    r.work_unit = "points";
    t.add(step, r);
    t.append_csv(csv.string());
    if (step == 10) bytes = t.csv_bytes(), fnv = t.csv_fnv1a();
  }
  std::ofstream(csv, std::ios::app) << "21,k,cpu/soa/fp32,1.5,10";  // killed mid-row
  const Telemetry::CsvPart part = Telemetry::read_csv_part(csv.string(), bytes, fnv, 10);
  ASSERT_EQ(part.rows.size(), 11u);
  for (std::size_t i = 0; i < part.rows.size(); ++i) {
    EXPECT_EQ(part.rows[i].step, std::int64_t(i));
    EXPECT_EQ(part.rows[i].rec.ms, 1.0 + double(i));
    EXPECT_EQ(part.rows[i].rec.work_unit, "points");
  }
  Telemetry again("host", 10.0);
  again.resume_csv(csv.string(), part);
  const auto lines = lines_of(csv);
  ASSERT_EQ(lines.size(), 1u + 11u);
  EXPECT_EQ(lines[0].rfind("step,kernel,", 0), 0u);
  for (std::size_t i = 1; i < lines.size(); ++i)
    EXPECT_EQ(lines[i].rfind(std::to_string(i - 1) + ",k,", 0), 0u) << lines[i];
  // Appends go on from the recorded part, and so does its fingerprint.
  KernelRecord r;
  r.kernel = "k2";
  again.add(11, r);
  again.append_csv(csv.string());
  EXPECT_EQ(again.csv_bytes(), fs::file_size(csv));
  EXPECT_NO_THROW(Telemetry::read_csv_part(csv.string(), again.csv_bytes(), again.csv_fnv1a(), 11));
}

// The output thread's rows (copies, file writes) come back after the kernels of later steps, so the
// recorded rows are not in step order; none may be of a step after the checkpoint's.
TEST(TelemetryCsv, RowsOutOfStepOrderComeBackButNotAfterTheCheckpoint) {
  const fs::path dir = fresh_dir("csv_order");
  const fs::path csv = dir / "telemetry.csv";
  Telemetry t("host", 10.0);
  for (const std::int64_t step : {0, 1, 2, 3, 1, 4, 2}) {
    KernelRecord r;
    r.kernel = "k";
    r.ms = double(step);
    t.add(step, r);
  }
  t.append_csv(csv.string());
  const Telemetry::CsvPart part = Telemetry::read_csv_part(csv.string(), t.csv_bytes(), t.csv_fnv1a(), 4);
  ASSERT_EQ(part.rows.size(), 7u);
  EXPECT_EQ(part.rows[4].step, 1);
  EXPECT_EQ(part.rows[6].step, 2);
  try {
    Telemetry::read_csv_part(csv.string(), t.csv_bytes(), t.csv_fnv1a(), 3);
    ADD_FAILURE() << "a row of step 4 before a checkpoint of step 3: no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(csv.string() + ":7: step 4, after the checkpoint's step 3", 0), 0u)
        << e.what();
  }
}

// A damaged telemetry.csv is refused in one printable line naming the file (and the line, where
// one is at fault), and left as it was: cut short, a changed digit, a garbled row, random bytes.
TEST(TelemetryCsv, DamageIsOneLineNamingFileAndLine) {
  const fs::path dir = fresh_dir("csv_damaged");
  const fs::path csv = dir / "telemetry.csv";
  Telemetry t("host", 10.0);
  for (std::int64_t step = 0; step < 6; ++step) {
    KernelRecord r;
    r.kernel = "k";
    r.ms = 0.5;
    t.add(step, r);
  }
  t.append_csv(csv.string());
  const std::uint64_t bytes = t.csv_bytes(), fnv = t.csv_fnv1a();
  const auto lines = lines_of(csv);
  auto damaged = [&](const std::string& label, const std::string& text, const std::string& expected) {
    { std::ofstream(csv, std::ios::binary | std::ios::trunc) << text; }
    try {
      Telemetry::read_csv_part(csv.string(), bytes, fnv, 5);
      ADD_FAILURE() << label << ": no error";
    } catch (const Error& e) {
      const std::string m = e.what();
      EXPECT_EQ(m.rfind(csv.string() + expected, 0), 0u) << label << ": " << m;
      EXPECT_EQ(m.find_first_of("\n\r\x07\x1b"), std::string::npos) << label << ": " << m;
    }
    std::ifstream f(csv, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(ss.str(), text) << label << ": the file is left as it was";
  };
  std::string all;
  for (const auto& l : lines) all += l + "\n";
  damaged("cut short", all.substr(0, all.size() - 30), ": " + std::to_string(bytes - 30) + " bytes, fewer than the ");
  std::string digit = all;
  digit[all.find(",0.5,", lines[0].size() + 1 + lines[1].size()) + 3] = '4';  // the ms of step 1: 0.4, still a row
  damaged("a changed digit", digit, ": its first ");
  std::string row = all;
  row.replace(lines[0].size() + 1, lines[1].size(), "x,k,garbage\x07\x1b[31m");
  damaged("a garbled row", row, ":2: not a telemetry row (binary data)");
  std::string noise(4096, '\0');
  std::mt19937 rng(7);
  for (char& c : noise) c = char(rng());
  noise[100] = '\n';
  damaged("random bytes", noise, ":1: not tiersim's telemetry header");
}

// A state written in parts by the ranks of a run (io/state_parts.hpp): three ranks' random slabs of
// an fp32 array and an fp64 one, a checkpoint and a step file that name them. Read back, the
// checkpoint's arrays are the slabs end to end, exactly; the step file's field is the grid. A part
// missing, cut short or replaced by a link is one error naming it, never values read as fill.
TEST(StateParts, CheckpointAndStepFileNameThePartsAndRefuseAMissingOne) {
  const fs::path dir = fresh_dir("parts");
  fs::create_directories(dir / kStepDir);
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  const int nx = 5, ny = 4;
  const std::vector<std::int64_t> planes = {3, 2, 4}, first_plane = {0, 3, 5};
  const std::int64_t step = 10, plane = nx * ny;
  std::vector<float> all32;
  std::vector<double> all64;
  std::vector<std::int64_t> first, count;
  for (int r = 0; r < 3; ++r) {
    std::vector<float> a(std::size_t(planes[r] * plane));
    std::vector<double> b(a.size());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = float(u(rng)), b[i] = u(rng);
    all32.insert(all32.end(), a.begin(), a.end());
    all64.insert(all64.end(), b.begin(), b.end());
    first.push_back(first_plane[r] * plane), count.push_back(planes[r] * plane);
    const std::uint64_t bytes =
        write_state_part(dir.string(), step, r, first.back(),
                         {{"field0", a.data(), a.size(), false}, {"field1", b.data(), b.size(), true}});
    EXPECT_EQ(bytes, file_bytes((dir / state_part_name(step, r)).string()));
  }
  std::atomic<bool> abandon{false};
  EXPECT_NO_THROW(wait_for_state_parts(dir.string(), step, 3, abandon, 5.0));
  abandon = true;
  EXPECT_THROW(wait_for_state_parts(dir.string(), step + 1, 3, abandon, 5.0), Error);  // none there: gives up
  abandon = false;
  EXPECT_THROW(wait_for_state_parts(dir.string(), step + 1, 3, abandon, 0.01), Error);  // times out

  Checkpoint c = sample_checkpoint(4);
  c.step = step;
  c.state.in_parts.push_back({"field0", step, first, count, false});
  c.state.in_parts.push_back({"field1", step, first, count, true});
  write_checkpoint(dir.string(), c);
  const Checkpoint back = read_checkpoint(dir.string());
  const HostArray<double>& f0 = back.state.array("field0");
  const HostArray<double>& f1 = back.state.array("field1");
  ASSERT_EQ(f0.size(), all32.size());
  ASSERT_EQ(f1.size(), all64.size());
  for (std::size_t i = 0; i < all32.size(); ++i) {
    ASSERT_EQ(f0[i], double(all32[i])) << i;
    ASSERT_EQ(f1[i], all64[i]) << i;
  }

  StepFileWriter w(dir.string());
  GridGeometry g;
  g.nx = nx, g.ny = ny, g.nz = 9;
  w.write_field_parts(step, "u", g, false, state_part_slabs(step, "field0", first_plane, planes, true));
  RunInfo info;
  StepFileRecord rec;
  rec.info = &info;
  w.close(rec);
  const std::string sp = (dir / step_file_name(step)).string();
  EXPECT_EQ(read_step_file(sp, step).fields.at(0).g.nz, 9);
  {
    const Hdf5Calls h5{sp};
    Hdf5Handle f(H5Fopen(sp.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    Hdf5Handle d = h5.dataset(f, "/fields/u");
    const std::vector<float> grid = h5.read_all<float>(d, "/fields/u", H5T_NATIVE_FLOAT);
    EXPECT_TRUE(grid == all32);
  }

  // Rank 1's part gone; then cut short; then a link in its place.
  const fs::path p1 = dir / state_part_name(step, 1), saved = dir / "saved.h5";
  fs::rename(p1, saved);
  for (const auto& [what, read] :
       {std::pair<std::string, std::function<void()>>{"checkpoint", [&] { read_checkpoint(dir.string()); }},
        {"step file", [&] { read_step_file(sp, step); }}}) {
    try {
      read();
      ADD_FAILURE() << what << ": read with a part missing";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(state_part_file(step, 1) + ": missing"), std::string::npos) << e.what();
    }
  }
  fs::copy_file(saved, p1);
  fs::resize_file(p1, fs::file_size(p1) / 2);
  EXPECT_THROW(read_checkpoint(dir.string()), Error);
  fs::remove(p1);
  fs::create_symlink(saved, p1);
  EXPECT_THROW(read_checkpoint(dir.string()), Error);
  EXPECT_THROW(read_step_file(sp, step), Error);
  // A failed part: its .tmp went away unfinished.
  fs::remove(p1);
  { std::ofstream(fs::path(temporary_name(p1.string()))) << "partial"; }
  std::thread drop([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fs::remove(temporary_name(p1.string()));
  });
  try {
    wait_for_state_parts(dir.string(), step, 3, abandon, 5.0);
    ADD_FAILURE() << "a part whose write failed was waited for";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 did not finish"), std::string::npos) << e.what();
  }
  drop.join();
  // Parts of other steps than those kept go on a restart.
  remove_state_parts_but(dir.string(), {});
  EXPECT_TRUE(state_part_steps(dir.string()).empty());
  fs::remove_all(dir);
}
