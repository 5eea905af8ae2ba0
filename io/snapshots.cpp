// H5MD 1.1 snapshots: an index file over one HDF5 file per output step (see io/snapshots.hpp).
#include "io/snapshots.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "io/hdf5_library.hpp"
#include "io/xdmf.hpp"
#include "base/kernel_record.hpp"

namespace fs = std::filesystem;

namespace tiersim {

namespace {

constexpr const char* kH5Name = "snapshots.h5";
constexpr const char* kXmfName = "snapshots.xmf";
constexpr const char* kCreator = "tiersim";

// Context for the checks (io/hdf5_library.hpp): the file path every message starts with.
struct H5 {
  std::string file;

  Hdf5Handle group(hid_t loc, const std::string& name) const {
    return {hdf5_check(H5Gopen2(loc, name.c_str(), H5P_DEFAULT), file, "cannot open group " + name), H5Gclose};
  }
  Hdf5Handle make_group(hid_t loc, const std::string& name) const {
    return {hdf5_check(H5Gcreate2(loc, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                  "cannot create group " + name),
            H5Gclose};
  }
  Hdf5Handle dataset(hid_t loc, const std::string& name) const {
    return {hdf5_check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), file, "cannot open dataset " + name), H5Dclose};
  }
  bool exists(hid_t loc, const std::string& path) const {
    // Walk the path: H5Lexists fails (rather than returning false) on a missing intermediate.
    std::string sofar;
    std::size_t start = path[0] == '/' ? 1 : 0;
    if (start) sofar = "/";
    while (start <= path.size()) {
      const auto slash = path.find('/', start);
      const std::string part = path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      sofar += (sofar.empty() || sofar == "/" ? "" : "/") + part;
      const htri_t e = H5Lexists(loc, sofar.c_str(), H5P_DEFAULT);
      if (e < 0) hdf5_fail(file, "cannot look up " + sofar);
      if (e == 0) return false;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    return true;
  }

  std::vector<hsize_t> dims(hid_t dset, const std::string& name) const {
    Hdf5Handle sp(hdf5_check(H5Dget_space(dset), file, "dataspace of " + name), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(sp);
    if (rank < 0) hdf5_fail(file, "rank of " + name);
    std::vector<hsize_t> d(static_cast<std::size_t>(rank));
    if (rank > 0 && H5Sget_simple_extent_dims(sp, d.data(), nullptr) < 0) hdf5_fail(file, "shape of " + name);
    return d;
  }

  template <class T>
  std::vector<T> read_all(hid_t dset, const std::string& name, hid_t memtype) const {
    const std::vector<hsize_t> d = dims(dset, name);
    hsize_t n = 1;
    for (hsize_t x : d) n *= x;
    std::vector<T> out(n);
    if (n > 0) hdf5_check_status(H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), file, "cannot read " + name);
    return out;
  }

  // Reads row `row` of value[T][rest...] into doubles.
  std::vector<double> read_row(hid_t dset, const std::string& name, hsize_t row) const {
    const std::vector<hsize_t> d = dims(dset, name);
    std::vector<hsize_t> start(d.size(), 0), count = d;
    start[0] = row;
    count[0] = 1;
    hsize_t n = 1;
    for (std::size_t k = 1; k < d.size(); ++k) n *= d[k];
    std::vector<double> out(n);
    Hdf5Handle fsp(hdf5_check(H5Dget_space(dset), file, "dataspace of " + name), H5Sclose);
    hdf5_check_status(H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file,
                 "selection in " + name);
    Hdf5Handle msp(hdf5_check(H5Screate_simple(int(count.size()), count.data(), nullptr), file, "memory dataspace"), H5Sclose);
    hdf5_check_status(H5Dread(dset, H5T_NATIVE_DOUBLE, msp, fsp, H5P_DEFAULT, out.data()), file, "cannot read " + name);
    return out;
  }

  void write_fixed(hid_t loc, const std::string& name, hid_t filetype, hid_t memtype, const std::vector<hsize_t>& d,
                   const void* data) const {
    Hdf5Handle sp(hdf5_check(H5Screate_simple(int(d.size()), d.data(), nullptr), file, "dataspace for " + name), H5Sclose);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(loc, name.c_str(), filetype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                    "cannot create dataset " + name),
              H5Dclose);
    hdf5_check_status(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file, "cannot write " + name);
  }

  Hdf5Handle string_type(std::size_t len) const {
    Hdf5Handle t(hdf5_check(H5Tcopy(H5T_C_S1), file, "string type"), H5Tclose);
    hdf5_check_status(H5Tset_size(t, std::max<std::size_t>(len, 1)), file, "string type");
    hdf5_check_status(H5Tset_strpad(t, H5T_STR_NULLPAD), file, "string type");
    return t;
  }

  void string_attr(hid_t obj, const std::string& name, const std::string& value) const {
    Hdf5Handle t = string_type(value.size());
    Hdf5Handle sp(hdf5_check(H5Screate(H5S_SCALAR), file, "dataspace"), H5Sclose);
    Hdf5Handle a(hdf5_check(H5Acreate2(obj, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT), file, "cannot create attribute " + name),
             H5Aclose);
    std::string buf = value.empty() ? std::string(1, '\0') : value;
    hdf5_check_status(H5Awrite(a, t, buf.data()), file, "cannot write attribute " + name);
  }

  void string_array_attr(hid_t obj, const std::string& name, const std::vector<std::string>& values) const {
    std::size_t len = 1;
    for (const auto& v : values) len = std::max(len, v.size());
    Hdf5Handle t = string_type(len);
    std::string buf(len * values.size(), '\0');
    for (std::size_t i = 0; i < values.size(); ++i) std::memcpy(&buf[i * len], values[i].data(), values[i].size());
    const hsize_t n = values.size();
    Hdf5Handle sp(hdf5_check(H5Screate_simple(1, &n, nullptr), file, "dataspace"), H5Sclose);
    Hdf5Handle a(hdf5_check(H5Acreate2(obj, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT), file, "cannot create attribute " + name),
             H5Aclose);
    hdf5_check_status(H5Awrite(a, t, buf.data()), file, "cannot write attribute " + name);
  }

  template <class T>
  void numeric_attr(hid_t obj, const std::string& name, hid_t filetype, hid_t memtype, const std::vector<T>& v) const {
    const hsize_t n = v.size();
    Hdf5Handle sp(hdf5_check(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), file, "dataspace"), H5Sclose);
    Hdf5Handle a(hdf5_check(H5Acreate2(obj, name.c_str(), filetype, sp, H5P_DEFAULT, H5P_DEFAULT), file,
                   "cannot create attribute " + name),
             H5Aclose);
    hdf5_check_status(H5Awrite(a, memtype, v.data()), file, "cannot write attribute " + name);
  }

  std::vector<double> read_double_attr(hid_t obj, const std::string& name) const {
    Hdf5Handle a(hdf5_check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, "cannot open attribute " + name), H5Aclose);
    Hdf5Handle sp(hdf5_check(H5Aget_space(a), file, "dataspace of attribute " + name), H5Sclose);
    const hssize_t n = H5Sget_simple_extent_npoints(sp);
    if (n < 0) hdf5_fail(file, "size of attribute " + name);
    std::vector<double> v(static_cast<std::size_t>(n));
    hdf5_check_status(H5Aread(a, H5T_NATIVE_DOUBLE, v.data()), file, "cannot read attribute " + name);
    return v;
  }

  std::string read_string_attr(hid_t obj, const std::string& name) const {
    Hdf5Handle a(hdf5_check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, "cannot open attribute " + name), H5Aclose);
    Hdf5Handle t(hdf5_check(H5Aget_type(a), file, "type of attribute " + name), H5Tclose);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0) throw Error(file + ": attribute " + name + " is not a fixed-length string");
    std::string s(H5Tget_size(t), '\0');
    hdf5_check_status(H5Aread(a, t, s.data()), file, "cannot read attribute " + name);
    s.resize(std::strlen(s.c_str()));
    return s;
  }

  void string_dataset(hid_t loc, const std::string& name, const std::string& value) const {
    Hdf5Handle t = string_type(value.size());
    Hdf5Handle sp(hdf5_check(H5Screate(H5S_SCALAR), file, "dataspace"), H5Sclose);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(loc, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                    "cannot create dataset " + name),
              H5Dclose);
    std::string buf = value.empty() ? std::string(1, '\0') : value;
    hdf5_check_status(H5Dwrite(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()), file, "cannot write " + name);
  }

  std::string read_string_dataset(hid_t loc, const std::string& name) const {
    Hdf5Handle ds = dataset(loc, name);
    Hdf5Handle t(hdf5_check(H5Dget_type(ds), file, "type of " + name), H5Tclose);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0) throw Error(file + ": " + name + " is not a fixed-length string");
    std::string s(H5Tget_size(t), '\0');
    hdf5_check_status(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), file, "cannot read " + name);
    s.resize(std::strlen(s.c_str()));
    return s;
  }

  // A virtual dataset `name` of shape vdims under loc whose parts live in other files: each
  // mapping puts the whole dataset `dataset` of `file` (a path relative to this file's directory:
  // HDF5 looks there when the reader's working directory differs) at row `row` of the view, or
  // over the whole view when row < 0. Rows whose file is missing read as NaN, not as zeros.
  struct ViewPart {
    std::string file, dataset;
    long long row = -1;
  };
  void make_view(hid_t loc, const std::string& name, hid_t filetype, const std::vector<hsize_t>& vdims,
                 const std::vector<ViewPart>& parts) const {
    Hdf5Handle vsp(hdf5_check(H5Screate_simple(int(vdims.size()), vdims.data(), nullptr), file, "dataspace for " + name), H5Sclose);
    Hdf5Handle dcpl(hdf5_check(H5Pcreate(H5P_DATASET_CREATE), file, "property list"), H5Pclose);
    if (H5Tget_class(filetype) == H5T_FLOAT) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      hdf5_check_status(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan), file, "fill value of " + name);
    }
    for (const ViewPart& p : parts) {
      std::vector<hsize_t> sdims = vdims, start(vdims.size(), 0), count = vdims;
      if (p.row >= 0) {
        sdims.erase(sdims.begin());
        start[0] = hsize_t(p.row);
        count[0] = 1;
      }
      Hdf5Handle ssp(hdf5_check(H5Screate_simple(int(sdims.size()), sdims.data(), nullptr), file, "dataspace for " + name),
                 H5Sclose);
      hdf5_check_status(H5Sselect_hyperslab(vsp, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file,
                   "selection for " + name);
      hdf5_check_status(H5Pset_virtual(dcpl, vsp, p.file.c_str(), p.dataset.c_str(), ssp), file,
                   "virtual mapping for " + name);
    }
    hdf5_check_status(H5Sselect_all(vsp), file, "selection for " + name);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(loc, name.c_str(), filetype, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT), file,
                    "cannot create virtual dataset " + name),
              H5Dclose);
  }
};

// A name usable as one HDF5 link (observables and fields are single path components).
std::string link_name(const std::string& s, const std::string& what) {
  if (s.empty() || s == "." || s == "..") throw Error(what + " name '" + s + "' is not usable as an HDF5 name");
  std::string out = s;
  for (char& c : out)
    if (c == '/') c = '_';
  return out;
}

std::string h5_path_of(const std::string& dir_or_h5) {
  std::error_code ec;
  if (fs::is_directory(dir_or_h5, ec)) return (fs::path(dir_or_h5) / kH5Name).string();
  return dir_or_h5;
}

Hdf5Handle file_access_plist(const std::string& file) {
  Hdf5Handle fapl(hdf5_check(H5Pcreate(H5P_FILE_ACCESS), file, "property list"), H5Pclose);
  // No file lock: ParaView, h5py and `tiersim` itself may read the last flushed snapshot while a
  // run is still writing (HDF5 1.10's lock would make them fail with "unable to lock file").
  hdf5_check_status(H5Pset_file_locking(fapl, 0, 1), file, "file locking property");
  return fapl;
}

Hdf5Handle open_for_reading(const std::string& path) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(path + ": no such file");
  Hdf5Handle fapl = file_access_plist(path);
  Hdf5Handle f(hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), path, "cannot open as HDF5"), H5Fclose);
  return f;
}

void require_tiersim_file(const H5& h5, hid_t f) {
  if (!h5.exists(f, "/h5md/creator")) throw Error(h5.file + ": not a tiersim snapshot file (no /h5md/creator)");
  Hdf5Handle creator = h5.group(f, "/h5md/creator");
  if (H5Aexists(creator, "name") <= 0 || h5.read_string_attr(creator, "name") != kCreator)
    throw Error(h5.file + ": not a tiersim snapshot file (H5MD creator is not tiersim)");
}

// Names of the links in one group, in name order.
std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(group, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
             [](hid_t, const char* n, const H5L_info_t*, void* data) -> herr_t {
               static_cast<std::vector<std::string>*>(data)->push_back(n);
               return 0;
             },
             &names);
  return names;
}

// How many rows of an ascending step series a restart at step `keep` keeps.
hsize_t rows_through(const std::vector<std::int64_t>& steps, std::int64_t keep) {
  return hsize_t(std::upper_bound(steps.begin(), steps.end(), keep) - steps.begin());
}

}  // namespace

// ---- Formats ------------------------------------------------------------------------------------

OutputFormats parse_formats(const std::string& list) {
  OutputFormats f{false, false};
  std::size_t start = 0;
  bool any = false;
  while (start <= list.size()) {
    const auto comma = list.find(',', start);
    std::string item = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (item == "xdmf") {
      f.xdmf = true;
    } else if (item == "vtk") {
      if (!vtk_output_available())
        throw Error("--format vtk: this tiersim was built without VTK (run scripts/setup, then configure and "
                    "build again; the configure output says why VTK was not used); available: xdmf");
      f.vtk = true;
    } else {
      throw Error("--format: unknown format '" + item + "' (expected xdmf, vtk or xdmf,vtk)");
    }
    any = true;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (!any) throw Error("--format: empty list (expected xdmf, vtk or xdmf,vtk)");
  return f;
}

// ---- The writer ---------------------------------------------------------------------------------
//
// Bulk data goes to one file per output step, DIR/snapshots.d/step_<step>.h5, written under a
// .tmp name and renamed when complete. snapshots.h5 is an index that commit() rewrites whole from
// the state held here (small: steps, times, observables, telemetry, and virtual datasets that map
// value[T][...] onto the step files) and renames over the old one. Every file a reader can see is
// therefore complete, whatever moment the run is killed at: HDF5 1.10 updates a file's metadata in
// place and in no crash-safe order, so an append-in-place file killed during a flush can name
// chunks past its own end (seen in CI: "addr overflow").

namespace {

constexpr const char* kStepDir = "snapshots.d";

// Relative to the run directory (and to snapshots.h5 and snapshots.xmf, which sit there).
std::string step_file_name(std::int64_t step) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s/step_%012lld.h5", kStepDir, static_cast<long long>(step));
  return buf;
}

// One row of /telemetry as stored in HDF5 (strings as variable-length C strings).
struct TelemetryRow {
  std::int64_t step;
  const char* kernel;
  const char* strategy;
  double ms, bytes_compulsory, bytes_modelled, flops, work;
  const char* work_unit;
  std::int8_t l2_window;
  double l2_window_bytes, l2_hit_ratio;
};

// The HDF5 compound type of TelemetryRow (its strings variable-length).
Hdf5Handle telemetry_type(const std::string& file) {
  Hdf5Handle str(hdf5_check(H5Tcopy(H5T_C_S1), file, "string type"), H5Tclose);
  hdf5_check_status(H5Tset_size(str, H5T_VARIABLE), file, "string type");
  Hdf5Handle ct(hdf5_check(H5Tcreate(H5T_COMPOUND, sizeof(TelemetryRow)), file, "compound type"), H5Tclose);
  auto ins = [&](const char* n, std::size_t off, hid_t ty) {
    hdf5_check_status(H5Tinsert(ct, n, off, ty), file, std::string("compound member ") + n);
  };
  ins("step", HOFFSET(TelemetryRow, step), H5T_NATIVE_INT64);
  ins("kernel", HOFFSET(TelemetryRow, kernel), str);
  ins("strategy", HOFFSET(TelemetryRow, strategy), str);
  ins("ms", HOFFSET(TelemetryRow, ms), H5T_NATIVE_DOUBLE);
  ins("bytes_compulsory", HOFFSET(TelemetryRow, bytes_compulsory), H5T_NATIVE_DOUBLE);
  ins("bytes_modelled", HOFFSET(TelemetryRow, bytes_modelled), H5T_NATIVE_DOUBLE);
  ins("flops", HOFFSET(TelemetryRow, flops), H5T_NATIVE_DOUBLE);
  ins("work", HOFFSET(TelemetryRow, work), H5T_NATIVE_DOUBLE);
  ins("work_unit", HOFFSET(TelemetryRow, work_unit), str);
  ins("l2_window", HOFFSET(TelemetryRow, l2_window), H5T_NATIVE_INT8);
  ins("l2_window_bytes", HOFFSET(TelemetryRow, l2_window_bytes), H5T_NATIVE_DOUBLE);
  ins("l2_hit_ratio", HOFFSET(TelemetryRow, l2_hit_ratio), H5T_NATIVE_DOUBLE);
  return ct;
}

void rename_or_throw(const std::string& from, const std::string& to) {
  std::error_code ec;
  fs::rename(from, to, ec);
  if (ec) throw Error(to + ": cannot rename " + from + " over it: " + ec.message());
}

}  // namespace

struct SnapshotFile::Impl {
  std::string dir, h5_path, xmf_path;
  H5 h5;  // messages about the index name snapshots.h5
  RunInfo info;
  bool double_precision = false;
  OutputFormats formats;
  std::unique_ptr<VtkWriter> vtk;

  // Particles: one row per snapshot; mass and id live in the step file of the first row.
  struct ParticleRow {
    std::int64_t step;
    double time, box_edge;
  };
  hsize_t n_particles = 0;
  std::vector<ParticleRow> particle_rows;
  // Fields in order of creation, each with its rows (step, time).
  struct Field {
    std::string name;  // link name
    GridGeometry g;
    bool double_precision = false;
    std::vector<std::pair<std::int64_t, double>> rows;
  };
  std::vector<Field> fields;
  struct Series {
    std::vector<std::int64_t> step;
    std::vector<double> time, value;
  };
  std::map<std::string, Series> observables;
  // Telemetry rows with their strings owned here.
  struct TelemetryEntry {
    std::int64_t step;
    std::string kernel, strategy, work_unit;
    double ms, bytes_compulsory, bytes_modelled, flops, work;
    bool l2_window;
    double l2_window_bytes, l2_hit_ratio;
  };
  bool has_telemetry = false;
  std::vector<TelemetryEntry> telemetry;
  std::string peak_source;
  double peak_gbs = 0;

  // The step file being written (renamed into place when the step changes or at commit());
  // step_file_step is -1 when none is.
  Hdf5Handle step_file;
  std::int64_t step_file_step = -1;
  bool dirty = false;

  hid_t ptype() const { return double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE; }
  std::string step_path(std::int64_t step) const { return (fs::path(dir) / step_file_name(step)).string(); }

  Field* find_field(const std::string& name) {
    for (Field& f : fields)
      if (f.name == name) return &f;
    return nullptr;
  }

  // ---- Step files ----

  // The step file for `step`, created (under .tmp) if it is not the one open. A step already
  // renamed into place is never reopened: readers may be reading it.
  hid_t open_step_file(std::int64_t step) {
    if (step_file.get() >= 0 && step_file_step == step) return step_file;
    close_step_file();
    const std::string path = step_path(step);
    std::error_code ec;
    if (fs::exists(path, ec))
      throw Error(path + ": step " + std::to_string(step) +
                  " is already complete (write every array of a step before the next commit)");
    const std::string tmp = path + ".tmp";
    Hdf5Handle fapl = file_access_plist(path);
    step_file = Hdf5Handle(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), path, "cannot create"), H5Fclose);
    step_file_step = step;
    write_step_data([&] {
      H5 sh{path};
      sh.numeric_attr<std::int64_t>(step_file, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {step});
    });
    return step_file;
  }

  void close_step_file() {
    if (step_file_step < 0) return;
    const std::string path = step_path(step_file_step);
    // The flush says why (the close's own flush would fail the same way); the file is closed
    // either way, since one left open would be closed again at exit.
    const herr_t flushed = H5Fflush(step_file, H5F_SCOPE_LOCAL);
    std::string why = flushed < 0 ? hdf5_error_reason() : "";
    if (step_file.close() < 0 && why.empty()) why = hdf5_error_reason();
    if (!why.empty()) {
      drop_step_file();
      throw Error(path + ": cannot write: " + why);
    }
    try {
      rename_or_throw(path + ".tmp", path);
    } catch (...) {
      drop_step_file();
      throw;
    }
    step_file_step = -1;
  }

  // After a failed write: the step being written is not published. Its .tmp goes (on a full disk
  // that gives the space back) and so do the rows naming it, so that a later commit (the
  // destructor's) indexes complete steps only.
  void drop_step_file() {
    if (step_file_step < 0) return;
    const std::int64_t step = step_file_step;
    step_file.close();  // may fail again; close_hdf5 remembers it
    H5Eclear2(H5E_DEFAULT);
    std::error_code ec;
    fs::remove(step_path(step) + ".tmp", ec);
    step_file_step = -1;
    if (!particle_rows.empty() && particle_rows.back().step == step) particle_rows.pop_back();
    for (Field& f : fields)
      if (!f.rows.empty() && f.rows.back().first == step) f.rows.pop_back();
  }

  // Runs the HDF5 writes of one array into the step file; a failure drops the step.
  template <class F>
  void write_step_data(F&& f) {
    try {
      f();
    } catch (...) {
      drop_step_file();
      throw;
    }
  }

  // ---- The index, snapshots.h5 ----

  void write_index_into(hid_t file) const {
    // /h5md
    Hdf5Handle g = h5.make_group(file, "h5md");
    h5.numeric_attr<int>(g, "version", H5T_STD_I32LE, H5T_NATIVE_INT, {1, 1});
    {
      Hdf5Handle a = h5.make_group(g, "author");
      const char* user = std::getenv("USER");
      if (!user || !*user) user = std::getenv("LOGNAME");
      h5.string_attr(a, "name", user && *user ? user : "unknown");
    }
    {
      Hdf5Handle c = h5.make_group(g, "creator");
      h5.string_attr(c, "name", kCreator);
      h5.string_attr(c, "version", info.creator_version.empty() ? "unknown" : info.creator_version);
    }
    // /parameters
    {
      Hdf5Handle p = h5.make_group(file, "parameters");
      h5.string_dataset(p, "case", info.case_toml);
      h5.string_dataset(p, "case_source", info.case_source);
      h5.string_dataset(p, "strategy", info.strategy);
      h5.string_dataset(p, "model", info.model);
      h5.string_dataset(p, "device", info.device);
      h5.string_dataset(p, "creator_version", info.creator_version);
      h5.string_attr(p, "precision", double_precision ? "fp64" : "fp32");
    }
    if (!particle_rows.empty()) write_particles_index(file);
    if (!observables.empty()) {
      Hdf5Handle og = h5.make_group(file, "observables");
      for (const auto& [name, s] : observables) {
        Hdf5Handle grp = h5.make_group(og, name);
        const hsize_t t = s.step.size();
        h5.write_fixed(grp, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, s.value.data());
        h5.write_fixed(grp, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, s.step.data());
        h5.write_fixed(grp, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, s.time.data());
      }
    }
    bool any_field = false;
    for (const Field& f : fields) any_field = any_field || !f.rows.empty();
    if (any_field) {
      Hdf5Handle fg = h5.make_group(file, "fields");
      for (const Field& f : fields)
        if (!f.rows.empty()) write_field_index(fg, f);
    }
    if (has_telemetry) write_telemetry_index(file);
  }

  void write_particles_index(hid_t file) const {
    const hsize_t t = particle_rows.size(), n = n_particles;
    std::vector<std::int64_t> steps(t);
    std::vector<double> times(t), edges(3 * t);
    for (hsize_t r = 0; r < t; ++r) {
      steps[r] = particle_rows[r].step;
      times[r] = particle_rows[r].time;
      std::fill_n(&edges[3 * r], 3, particle_rows[r].box_edge);
    }
    Hdf5Handle lcpl(hdf5_check(H5Pcreate(H5P_LINK_CREATE), h5.file, "property list"), H5Pclose);
    hdf5_check_status(H5Pset_create_intermediate_group(lcpl, 1), h5.file, "property list");
    Hdf5Handle all(hdf5_check(H5Gcreate2(file, "/particles/all", lcpl, H5P_DEFAULT, H5P_DEFAULT), h5.file,
                     "cannot create group /particles/all"),
               H5Gclose);
    {
      Hdf5Handle box = h5.make_group(all, "box");
      h5.numeric_attr<int>(box, "dimension", H5T_STD_I32LE, H5T_NATIVE_INT, {3});
      h5.string_array_attr(box, "boundary", {"none", "none", "none"});
      Hdf5Handle e = h5.make_group(box, "edges");
      h5.write_fixed(e, "value", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t, 3}, edges.data());
    }
    for (const char* el : {"position", "velocity"}) {
      Hdf5Handle g = h5.make_group(all, el);
      std::vector<H5::ViewPart> parts;
      for (hsize_t r = 0; r < t; ++r)
        parts.push_back({step_file_name(steps[r]), std::string("/particles/") + el, static_cast<long long>(r)});
      h5.make_view(g, "value", ptype(), {t, n, 3}, parts);
    }
    {
      Hdf5Handle pos = h5.group(all, "position");
      h5.write_fixed(pos, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, steps.data());
      h5.write_fixed(pos, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, times.data());
    }
    // H5MD: elements sampled together share step and time (hard links).
    for (const char* el : {"/particles/all/velocity", "/particles/all/box/edges"})
      for (const char* st : {"step", "time"})
        hdf5_check_status(H5Lcreate_hard(file, (std::string("/particles/all/position/") + st).c_str(), file,
                                    (std::string(el) + "/" + st).c_str(), H5P_DEFAULT, H5P_DEFAULT),
                     h5.file, std::string("cannot link ") + el + "/" + st);
    // Time-independent: mass (run precision) and id (the index), kept in the first step file.
    const std::string first = step_file_name(steps.front());
    h5.make_view(all, "mass", ptype(), {n}, {{first, "/particles/mass"}});
    h5.make_view(all, "id", H5T_STD_I64LE, {n}, {{first, "/particles/id"}});
  }

  void write_field_index(hid_t fields_group, const Field& f) const {
    Hdf5Handle grp = h5.make_group(fields_group, f.name);
    const hsize_t t = f.rows.size();
    std::vector<std::int64_t> steps(t);
    std::vector<double> times(t);
    std::vector<H5::ViewPart> parts;
    for (hsize_t r = 0; r < t; ++r) {
      steps[r] = f.rows[r].first;
      times[r] = f.rows[r].second;
      parts.push_back({step_file_name(steps[r]), "/fields/" + f.name, static_cast<long long>(r)});
    }
    h5.make_view(grp, "value", f.double_precision ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                 {t, hsize_t(f.g.nz), hsize_t(f.g.ny), hsize_t(f.g.nx)}, parts);
    h5.write_fixed(grp, "step", H5T_STD_I64LE, H5T_NATIVE_INT64, {t}, steps.data());
    h5.write_fixed(grp, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {t}, times.data());
    const GridGeometry& g = f.g;
    h5.numeric_attr<double>(grp, "origin", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {g.origin[0], g.origin[1], g.origin[2]});
    h5.numeric_attr<double>(grp, "spacing", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {g.spacing[0], g.spacing[1], g.spacing[2]});
    h5.numeric_attr<int>(grp, "shape", H5T_STD_I32LE, H5T_NATIVE_INT, {g.nx, g.ny, g.nz});
    h5.string_attr(grp, "layout", "value[T][nz][ny][nx], x fastest; origin, spacing, shape in x, y, z order");
  }

  void write_telemetry_index(hid_t file) const {
    Hdf5Handle ct = telemetry_type(h5.file);
    std::vector<TelemetryRow> rows;
    rows.reserve(telemetry.size());
    for (const TelemetryEntry& r : telemetry)
      rows.push_back({r.step, r.kernel.c_str(), r.strategy.c_str(), r.ms, r.bytes_compulsory, r.bytes_modelled, r.flops,
                      r.work, r.work_unit.c_str(), std::int8_t(r.l2_window ? 1 : 0), r.l2_window_bytes,
                      r.l2_hit_ratio});
    const hsize_t n = rows.size();
    Hdf5Handle sp(hdf5_check(H5Screate_simple(1, &n, nullptr), h5.file, "dataspace for /telemetry"), H5Sclose);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(file, "/telemetry", ct, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), h5.file,
                    "cannot create dataset /telemetry"),
              H5Dclose);
    if (n > 0) hdf5_check_status(H5Dwrite(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), h5.file, "cannot write /telemetry");
    h5.string_attr(ds, "peak_source", peak_source);
    h5.numeric_attr<double>(ds, "peak_gbs", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {peak_gbs});
  }

  // Writes snapshots.h5.tmp and renames it over snapshots.h5; on failure the old index stays.
  void write_index() {
    const std::string tmp = h5_path + ".tmp";
    try {
      Hdf5Handle fapl = file_access_plist(h5_path);
      Hdf5Handle f(hdf5_check(H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl), h5_path, "cannot create"), H5Fclose);
      write_index_into(f);
      hdf5_check_status(H5Fflush(f, H5F_SCOPE_LOCAL), h5_path, "cannot write");
      hdf5_check_status(f.close(), h5_path, "cannot write");  // its last write: never rename a file it failed
    } catch (...) {
      std::error_code ec;
      fs::remove(tmp, ec);
      throw;
    }
    rename_or_throw(tmp, h5_path);
  }

  std::vector<XdmfCollection> xdmf_collections() const {
    std::vector<XdmfCollection> out;
    const int prec = double_precision ? 8 : 4;
    if (!particle_rows.empty()) {
      const std::string first = step_file_name(particle_rows.front().step);
      XdmfCollection c{"particles", {}};
      for (const ParticleRow& row : particle_rows) {
        const std::string file = step_file_name(row.step);
        XdmfGridStep s;
        s.step = row.step;
        s.time = row.time;
        s.particles = true;
        s.points = n_particles;
        s.position = {"position", file, "/particles/position", {n_particles, 3}, true, prec, true};
        s.connectivity = {"id", first, "/particles/id", {n_particles}, false, 8, false};
        s.attributes.push_back({"velocity", file, "/particles/velocity", {n_particles, 3}, true, prec, true});
        s.attributes.push_back({"mass", first, "/particles/mass", {n_particles}, true, prec, false});
        s.attributes.push_back({"id", first, "/particles/id", {n_particles}, false, 8, false});
        c.steps.push_back(std::move(s));
      }
      out.push_back(std::move(c));
    }
    // Fields sharing a geometry go into one collection: one grid per step with every field
    // written at that step.
    std::vector<bool> used(fields.size(), false);
    int group = 0;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (used[i] || fields[i].rows.empty()) continue;
      const GridGeometry& g = fields[i].g;
      auto same = [&](const GridGeometry& o) {
        return o.nx == g.nx && o.ny == g.ny && o.nz == g.nz && std::equal(o.origin, o.origin + 3, g.origin) &&
               std::equal(o.spacing, o.spacing + 3, g.spacing);
      };
      std::map<std::int64_t, XdmfGridStep> by_step;
      for (std::size_t j = i; j < fields.size(); ++j) {
        if (used[j] || !same(fields[j].g)) continue;
        used[j] = true;
        const Field& f = fields[j];
        for (const auto& [step, time] : f.rows) {
          auto [it, fresh] = by_step.try_emplace(step);
          XdmfGridStep& s = it->second;
          if (fresh) {
            s.step = step;
            s.time = time;
            s.particles = false;
            s.nx = g.nx;
            s.ny = g.ny;
            s.nz = g.nz;
            std::copy(g.origin, g.origin + 3, s.origin);
            std::copy(g.spacing, g.spacing + 3, s.spacing);
          }
          s.attributes.push_back({f.name, step_file_name(step), "/fields/" + f.name,
                                  {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)}, true, f.double_precision ? 8 : 4,
                                  false});
        }
      }
      XdmfCollection c{group == 0 ? "fields" : "fields_" + std::to_string(group + 1), {}};
      for (auto& kv : by_step) c.steps.push_back(std::move(kv.second));
      out.push_back(std::move(c));
      ++group;
    }
    return out;
  }

  // Order matters for a reader at any moment: step files complete, then the index that names
  // them, then the .xmf that names both.
  void commit() {
    close_step_file();
    write_index();
    if (formats.xdmf) write_file_atomically(xmf_path, xdmf_document(kH5Name, xdmf_collections()));
    if (vtk) vtk->commit();
    dirty = false;
  }

  template <class T>
  void write_field(std::int64_t step, double time, const std::string& name_in, const GridGeometry& g, const T* data) {
    const std::string name = link_name(name_in, "field");
    if (g.nx <= 0 || g.ny <= 0 || g.nz <= 0)
      throw Error(h5.file + ": field " + name + ": grid " + std::to_string(g.nx) + "x" + std::to_string(g.ny) + "x" +
                  std::to_string(g.nz) + " is empty");
    constexpr bool dp = std::is_same_v<T, double>;
    Field* f = find_field(name);
    if (f) {
      const GridGeometry& o = f->g;
      if (o.nx != g.nx || o.ny != g.ny || o.nz != g.nz)
        throw Error(h5.file + ": field " + name + ": grid changed from " + std::to_string(o.nx) + "x" +
                    std::to_string(o.ny) + "x" + std::to_string(o.nz) + " to " + std::to_string(g.nx) + "x" +
                    std::to_string(g.ny) + "x" + std::to_string(g.nz));
      if (f->double_precision != dp)
        throw Error(h5.file + ": field " + name + ": precision changed from " + (dp ? "fp32 to fp64" : "fp64 to fp32"));
      if (!f->rows.empty() && step <= f->rows.back().first)
        throw Error(h5.file + ": field " + name + ": step " + std::to_string(step) + " written after step " +
                    std::to_string(f->rows.back().first));
    }
    const hid_t sf = open_step_file(step);
    write_step_data([&] {
      H5 sh{step_path(step)};
      if (!sh.exists(sf, "/fields")) sh.make_group(sf, "fields");
      Hdf5Handle fg = sh.group(sf, "/fields");
      sh.write_fixed(fg, name, dp ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, dp ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT,
                     {hsize_t(g.nz), hsize_t(g.ny), hsize_t(g.nx)}, data);
    });
    if (!f) {
      fields.push_back({name, g, dp, {}});
      f = &fields.back();
    }
    f->rows.emplace_back(step, time);
    dirty = true;
    if (vtk) vtk->write_field(step, time, name, g, data);
  }

  // ---- Restart: reload the state from the index, dropping rows with step > keep ----

  void reload(hid_t file, std::int64_t keep) {
    {
      Hdf5Handle p = h5.group(file, "/parameters");
      info.case_toml = h5.read_string_dataset(p, "case");
      info.case_source = h5.read_string_dataset(p, "case_source");
      info.strategy = h5.read_string_dataset(p, "strategy");
      info.model = h5.read_string_dataset(p, "model");
      info.device = h5.read_string_dataset(p, "device");
      info.creator_version = h5.read_string_dataset(p, "creator_version");
      if (H5Aexists(p, "precision") > 0) double_precision = h5.read_string_attr(p, "precision") == "fp64";
    }
    if (h5.exists(file, "/particles/all/position")) {
      Hdf5Handle pos = h5.group(file, "/particles/all/position");
      Hdf5Handle st = h5.dataset(pos, "step"), tm = h5.dataset(pos, "time"), val = h5.dataset(pos, "value");
      Hdf5Handle ed = h5.dataset(file, "/particles/all/box/edges/value");
      const auto steps = h5.read_all<std::int64_t>(st, "position/step", H5T_NATIVE_INT64);
      const auto times = h5.read_all<double>(tm, "position/time", H5T_NATIVE_DOUBLE);
      const auto edges = h5.read_all<double>(ed, "box/edges/value", H5T_NATIVE_DOUBLE);
      const auto d = h5.dims(val, "position/value");
      if (d.size() != 3 || times.size() != steps.size() || edges.size() != 3 * steps.size())
        throw Error(h5.file + ": /particles/all: malformed (value, step, time and box disagree)");
      n_particles = d[1];
      const hsize_t kept = rows_through(steps, keep);
      for (hsize_t r = 0; r < kept; ++r) particle_rows.push_back({steps[r], times[r], edges[3 * r]});
    }
    if (h5.exists(file, "/fields")) {
      Hdf5Handle fg = h5.group(file, "/fields");
      for (const std::string& name : link_names(fg)) {
        const std::string path = "/fields/" + name;
        Hdf5Handle grp = h5.group(file, path);
        Hdf5Handle st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time"), val = h5.dataset(grp, "value");
        const auto steps = h5.read_all<std::int64_t>(st, path + "/step", H5T_NATIVE_INT64);
        const auto times = h5.read_all<double>(tm, path + "/time", H5T_NATIVE_DOUBLE);
        Field f;
        f.name = name;
        const auto origin = h5.read_double_attr(grp, "origin"), spacing = h5.read_double_attr(grp, "spacing");
        const auto d = h5.dims(val, path + "/value");
        if (origin.size() != 3 || spacing.size() != 3 || d.size() != 4 || times.size() != steps.size())
          throw Error(h5.file + ": " + path + ": malformed field");
        f.g.nz = int(d[1]);
        f.g.ny = int(d[2]);
        f.g.nx = int(d[3]);
        std::copy(origin.begin(), origin.end(), f.g.origin);
        std::copy(spacing.begin(), spacing.end(), f.g.spacing);
        Hdf5Handle t(hdf5_check(H5Dget_type(val), h5.file, "type of " + path), H5Tclose);
        f.double_precision = H5Tget_size(t) == 8;
        const hsize_t kept = rows_through(steps, keep);
        for (hsize_t r = 0; r < kept; ++r) f.rows.emplace_back(steps[r], times[r]);
        fields.push_back(std::move(f));
      }
    }
    if (h5.exists(file, "/observables")) {
      Hdf5Handle og = h5.group(file, "/observables");
      for (const std::string& name : link_names(og)) {
        const std::string path = "/observables/" + name;
        Hdf5Handle grp = h5.group(file, path);
        Hdf5Handle val = h5.dataset(grp, "value"), st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time");
        Series s;
        s.step = h5.read_all<std::int64_t>(st, path + "/step", H5T_NATIVE_INT64);
        s.time = h5.read_all<double>(tm, path + "/time", H5T_NATIVE_DOUBLE);
        s.value = h5.read_all<double>(val, path + "/value", H5T_NATIVE_DOUBLE);
        if (s.time.size() != s.step.size() || s.value.size() != s.step.size())
          throw Error(h5.file + ": " + path + ": value, step and time disagree");
        const hsize_t kept = rows_through(s.step, keep);
        s.step.resize(kept);
        s.time.resize(kept);
        s.value.resize(kept);
        observables[name] = std::move(s);
      }
    }
    // Telemetry rows of steps after the kept snapshot are redone by the restarted run.
    if (h5.exists(file, "/telemetry")) {
      Hdf5Handle ds = h5.dataset(file, "/telemetry");
      Hdf5Handle ct = telemetry_type(h5.file);
      const std::vector<hsize_t> d = h5.dims(ds, "/telemetry");
      std::vector<TelemetryRow> rows(d.empty() ? 0 : d[0]);
      if (!rows.empty()) {
        hdf5_check_status(H5Dread(ds, ct, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows.data()), h5.file, "cannot read /telemetry");
        auto str = [](const char* s) { return std::string(s ? s : ""); };
        for (const TelemetryRow& r : rows)
          if (r.step <= keep)
            telemetry.push_back({r.step, str(r.kernel), str(r.strategy), str(r.work_unit), r.ms, r.bytes_compulsory,
                                 r.bytes_modelled, r.flops, r.work, r.l2_window != 0, r.l2_window_bytes,
                                 r.l2_hit_ratio});
        Hdf5Handle sp(hdf5_check(H5Dget_space(ds), h5.file, "dataspace of /telemetry"), H5Sclose);
        H5Dvlen_reclaim(ct, sp, H5P_DEFAULT, rows.data());
      }
      has_telemetry = true;
      peak_source = H5Aexists(ds, "peak_source") > 0 ? h5.read_string_attr(ds, "peak_source") : "";
      const auto pk = H5Aexists(ds, "peak_gbs") > 0 ? h5.read_double_attr(ds, "peak_gbs") : std::vector<double>{};
      peak_gbs = pk.empty() ? 0.0 : pk[0];
    }
  }

  // After a restart's index is in place: remove every step file it does not name (steps after
  // the kept one, and .tmp files of a killed run).
  void remove_unnamed_step_files() const {
    std::set<std::string> named;
    for (const ParticleRow& r : particle_rows) named.insert(step_file_name(r.step));
    for (const Field& f : fields)
      for (const auto& row : f.rows) named.insert(step_file_name(row.first));
    std::error_code ec;
    const fs::path sd = fs::path(dir) / kStepDir;
    for (const auto& e : fs::directory_iterator(sd, ec)) {
      const std::string rel = std::string(kStepDir) + "/" + e.path().filename().string();
      if (!named.count(rel)) fs::remove(e.path(), ec);
    }
  }
};

SnapshotFile::SnapshotFile(const std::string& dir, const RunInfo& info, bool double_precision)
    : SnapshotFile(dir, info, SnapshotOptions{double_precision, false, OutputFormats{}}) {}

SnapshotFile::SnapshotFile(const std::string& dir, const RunInfo& info, const SnapshotOptions& options)
    : impl_(std::make_unique<Impl>()) {
  silence_hdf5_errors();
  Impl& m = *impl_;
  m.dir = dir;
  m.h5_path = (fs::path(dir) / kH5Name).string();
  m.xmf_path = (fs::path(dir) / kXmfName).string();
  m.h5.file = m.h5_path;
  m.info = info;
  m.double_precision = options.double_precision;
  m.formats = options.formats;

  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) throw Error(dir + ": output path exists and is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  const std::string step_dir = (fs::path(dir) / kStepDir).string();
  for (const std::string& p : {m.h5_path, m.xmf_path, step_dir}) {
    if (fs::exists(p, ec)) {
      if (!options.overwrite)
        throw Error(p + ": already exists (the output directory holds a run; use --force to replace it)");
      fs::remove_all(p, ec);
      if (ec) throw Error(p + ": cannot remove: " + ec.message());
    }
  }
  fs::create_directory(step_dir, ec);
  if (ec) throw Error(step_dir + ": cannot create: " + ec.message());
  if (options.formats.vtk) m.vtk = std::make_unique<VtkWriter>(dir);
  m.commit();
}

SnapshotFile::SnapshotFile(const std::string& dir, std::int64_t keep_through_step, const OutputFormats& formats,
                           ResumeTag)
    : impl_(std::make_unique<Impl>()) {
  silence_hdf5_errors();
  Impl& m = *impl_;
  m.dir = dir;
  m.h5_path = (fs::path(dir) / kH5Name).string();
  m.xmf_path = (fs::path(dir) / kXmfName).string();
  m.h5.file = m.h5_path;
  m.formats = formats;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(dir + ": not a directory (cannot continue a run there)");
  if (!fs::exists(m.h5_path, ec)) throw Error(dir + ": not a tiersim run (no snapshots.h5)");
  if (!fs::is_directory(fs::path(dir) / kStepDir, ec))
    throw Error(dir + ": not a tiersim run of this version (no " + kStepDir + "/ beside snapshots.h5)");
  {
    Hdf5Handle f = open_for_reading(m.h5_path);
    require_tiersim_file(m.h5, f);
    m.reload(f, keep_through_step);
  }
  if (formats.vtk) {
    m.vtk = std::make_unique<VtkWriter>(dir);
    std::vector<std::pair<std::int64_t, double>> psteps, fsteps;
    for (const auto& r : m.particle_rows) psteps.emplace_back(r.step, r.time);
    for (const auto& f : m.fields) fsteps.insert(fsteps.end(), f.rows.begin(), f.rows.end());
    std::sort(fsteps.begin(), fsteps.end());
    fsteps.erase(std::unique(fsteps.begin(), fsteps.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 fsteps.end());
    m.vtk->adopt_existing(psteps, fsteps);
  }
  m.commit();
  m.remove_unnamed_step_files();
}

std::unique_ptr<SnapshotFile> SnapshotFile::resume(const std::string& dir, std::int64_t keep_through_step,
                                                   const OutputFormats& formats) {
  return std::unique_ptr<SnapshotFile>(new SnapshotFile(dir, keep_through_step, formats, ResumeTag{}));
}

SnapshotFile::~SnapshotFile() {
  if (!impl_) return;
  try {
    if (impl_->dirty) impl_->commit();
  } catch (...) {
    // A destructor cannot report; commit() is where errors are seen.
  }
  impl_->vtk.reset();
  impl_->drop_step_file();  // left open only by a failed commit: not published
  H5Eclear2(H5E_DEFAULT);
}

void SnapshotFile::write_particles(std::int64_t step, double time, const Bodies& b, double box_edge) {
  Impl& m = *impl_;
  const hsize_t n = b.size();
  if (b.pos.size() != n || b.vel.size() != n) throw Error(m.h5_path + ": particles: inconsistent body arrays");
  if (m.particle_rows.empty()) m.n_particles = n;
  if (n != m.n_particles)
    throw Error(m.h5_path + ": particles: " + std::to_string(n) + " bodies at step " + std::to_string(step) +
                ", the file holds " + std::to_string(m.n_particles));
  if (!m.particle_rows.empty() && step <= m.particle_rows.back().step)
    throw Error(m.h5_path + ": particles: step " + std::to_string(step) + " written after step " +
                std::to_string(m.particle_rows.back().step));

  const hid_t sf = m.open_step_file(step);
  m.write_step_data([&] {
    H5 sh{m.step_path(step)};
    Hdf5Handle pg = sh.make_group(sf, "particles");
    const hid_t memtype = m.double_precision ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT;
    auto write_vec = [&](const char* el, const std::vector<Vec3<double>>& v) {
      std::vector<double> d(3 * n);
      for (hsize_t i = 0; i < n; ++i) {
        d[3 * i] = v[i].x;
        d[3 * i + 1] = v[i].y;
        d[3 * i + 2] = v[i].z;
      }
      if (m.double_precision) return sh.write_fixed(pg, el, m.ptype(), memtype, {n, 3}, d.data());
      const std::vector<float> f(d.begin(), d.end());
      sh.write_fixed(pg, el, m.ptype(), memtype, {n, 3}, f.data());
    };
    write_vec("position", b.pos);
    write_vec("velocity", b.vel);
    if (m.particle_rows.empty()) {
      // Time-independent: mass (run precision) and id (the body index), in the first step file.
      std::vector<std::int64_t> id(n);
      for (hsize_t i = 0; i < n; ++i) id[i] = std::int64_t(i);
      sh.write_fixed(pg, "mass", m.ptype(), H5T_NATIVE_DOUBLE, {n}, b.mass.data());
      sh.write_fixed(pg, "id", H5T_STD_I64LE, H5T_NATIVE_INT64, {n}, id.data());
    }
  });
  m.particle_rows.push_back({step, time, box_edge});
  m.dirty = true;
  if (m.vtk) m.vtk->write_particles(step, time, b, m.double_precision);
}

void SnapshotFile::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                               const float* data) {
  impl_->write_field(step, time, name, g, data);
}
void SnapshotFile::write_field(std::int64_t step, double time, const std::string& name, const GridGeometry& g,
                               const double* data) {
  impl_->write_field(step, time, name, g, data);
}

void SnapshotFile::write_observables(std::int64_t step, double time,
                                     const std::vector<std::pair<std::string, double>>& values) {
  Impl& m = *impl_;
  for (const auto& [raw, v] : values) {
    Impl::Series& s = m.observables[link_name(raw, "observable")];
    if (!s.step.empty() && step <= s.step.back())
      throw Error(m.h5_path + ": observable " + raw + ": step " + std::to_string(step) + " written after step " +
                  std::to_string(s.step.back()));
    s.step.push_back(step);
    s.time.push_back(time);
    s.value.push_back(v);
  }
  m.dirty = true;
}

void SnapshotFile::write_telemetry(const std::vector<StepRecord>& rows, double peak_gbs,
                                   const std::string& peak_source) {
  Impl& m = *impl_;
  if (!m.has_telemetry) {
    m.peak_source = peak_source;
    m.peak_gbs = peak_gbs;
  }
  m.has_telemetry = true;
  for (const auto& r : rows)
    m.telemetry.push_back({r.step, r.rec.kernel, r.rec.strategy, r.rec.work_unit, r.rec.ms, r.rec.bytes_compulsory,
                           r.rec.bytes_modelled, r.rec.flops, r.rec.work, r.rec.l2_window, r.rec.l2_window_bytes,
                           r.rec.l2_hit_ratio});
  m.dirty = true;
}

void SnapshotFile::commit() { impl_->commit(); }

std::int64_t SnapshotFile::last_particle_step() const {
  return impl_->particle_rows.empty() ? -1 : impl_->particle_rows.back().step;
}

std::int64_t SnapshotFile::last_snapshot_step() const {
  std::int64_t last = last_particle_step();
  for (const auto& f : impl_->fields)
    if (!f.rows.empty()) last = std::max(last, f.rows.back().first);
  return last;
}

const std::string& SnapshotFile::h5_path() const { return impl_->h5_path; }
const std::string& SnapshotFile::xmf_path() const { return impl_->xmf_path; }

// ---- Reading back -------------------------------------------------------------------------------

RunInfo read_run_info(const std::string& dir_or_h5) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  H5 h5{path};
  require_tiersim_file(h5, f);
  Hdf5Handle p = h5.group(f, "/parameters");
  RunInfo info;
  info.case_toml = h5.read_string_dataset(p, "case");
  info.case_source = h5.read_string_dataset(p, "case_source");
  info.strategy = h5.read_string_dataset(p, "strategy");
  info.model = h5.read_string_dataset(p, "model");
  info.device = h5.read_string_dataset(p, "device");
  info.creator_version = h5.read_string_dataset(p, "creator_version");
  return info;
}

std::vector<std::int64_t> particle_steps(const std::string& dir_or_h5) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  H5 h5{path};
  if (!h5.exists(f, "/particles/all/position/step")) return {};
  Hdf5Handle st = h5.dataset(f, "/particles/all/position/step");
  return h5.read_all<std::int64_t>(st, "/particles/all/position/step", H5T_NATIVE_INT64);
}

namespace {
// A virtual dataset reads a missing source file as fill values; a reader says which file is gone.
void require_step_file(const std::string& h5_path, std::int64_t step) {
  const fs::path p = fs::path(h5_path).parent_path() / step_file_name(step);
  std::error_code ec;
  if (!fs::exists(p, ec))
    throw Error(p.string() + ": missing (" + h5_path + " names it for step " + std::to_string(step) + ")");
}

hsize_t find_row(const std::string& file, const std::string& what, const std::vector<std::int64_t>& steps,
                 std::int64_t step) {
  if (steps.empty()) throw Error(file + ": no " + what + " snapshots");
  if (step < 0) return steps.size() - 1;
  const auto it = std::find(steps.begin(), steps.end(), step);
  if (it == steps.end()) throw Error(file + ": no " + what + " snapshot at step " + std::to_string(step));
  return hsize_t(it - steps.begin());
}
}  // namespace

ParticleSnapshot read_particles(const std::string& dir_or_h5, std::int64_t step) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  H5 h5{path};
  if (!h5.exists(f, "/particles/all/position/step")) throw Error(path + ": no particle snapshots");
  Hdf5Handle st = h5.dataset(f, "/particles/all/position/step"), tm = h5.dataset(f, "/particles/all/position/time");
  const auto steps = h5.read_all<std::int64_t>(st, "/particles/all/position/step", H5T_NATIVE_INT64);
  const auto times = h5.read_all<double>(tm, "/particles/all/position/time", H5T_NATIVE_DOUBLE);
  const hsize_t row = find_row(path, "particle", steps, step);
  require_step_file(path, steps[row]);
  require_step_file(path, steps.front());  // mass
  ParticleSnapshot s;
  s.step = steps[row];
  s.time = times.at(row);
  Hdf5Handle pos = h5.dataset(f, "/particles/all/position/value"), vel = h5.dataset(f, "/particles/all/velocity/value");
  const auto p = h5.read_row(pos, "/particles/all/position/value", row);
  const auto v = h5.read_row(vel, "/particles/all/velocity/value", row);
  Hdf5Handle mass = h5.dataset(f, "/particles/all/mass");
  const auto m = h5.read_all<double>(mass, "/particles/all/mass", H5T_NATIVE_DOUBLE);
  const std::size_t n = m.size();
  if (p.size() != 3 * n || v.size() != 3 * n) throw Error(path + ": particle arrays disagree on the number of bodies");
  s.bodies.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    s.bodies.pos[i] = {p[3 * i], p[3 * i + 1], p[3 * i + 2]};
    s.bodies.vel[i] = {v[3 * i], v[3 * i + 1], v[3 * i + 2]};
    s.bodies.acc[i] = {0, 0, 0};
    s.bodies.mass[i] = m[i];
  }
  return s;
}

FieldSnapshot read_field(const std::string& dir_or_h5, const std::string& name, std::int64_t step) {
  const std::string path = h5_path_of(dir_or_h5);
  Hdf5Handle f = open_for_reading(path);
  H5 h5{path};
  const std::string g = "/fields/" + link_name(name, "field");
  if (!h5.exists(f, g)) throw Error(path + ": no field " + name);
  Hdf5Handle grp = h5.group(f, g);
  Hdf5Handle st = h5.dataset(grp, "step"), tm = h5.dataset(grp, "time"), val = h5.dataset(grp, "value");
  const auto steps = h5.read_all<std::int64_t>(st, g + "/step", H5T_NATIVE_INT64);
  const auto times = h5.read_all<double>(tm, g + "/time", H5T_NATIVE_DOUBLE);
  const hsize_t row = find_row(path, "field " + name, steps, step);
  require_step_file(path, steps[row]);
  FieldSnapshot s;
  s.step = steps[row];
  s.time = times.at(row);
  const auto d = h5.dims(val, g + "/value");
  if (d.size() != 4) throw Error(path + ": " + g + "/value is not value[T][nz][ny][nx]");
  s.geometry.nz = int(d[1]);
  s.geometry.ny = int(d[2]);
  s.geometry.nx = int(d[3]);
  const auto o = h5.read_double_attr(grp, "origin"), sp = h5.read_double_attr(grp, "spacing");
  if (o.size() != 3 || sp.size() != 3) throw Error(path + ": " + g + ": origin/spacing are not 3 values");
  std::copy(o.begin(), o.end(), s.geometry.origin);
  std::copy(sp.begin(), sp.end(), s.geometry.spacing);
  s.values = h5.read_row(val, g + "/value", row);
  return s;
}

}  // namespace tiersim
