// Everything tiersim does with the HDF5 library, in one place: owning and closing identifiers,
// one-line errors, the library's shutdown at exit, and the checked calls (groups, datasets,
// attributes, strings, virtual datasets) that the snapshot files and the checkpoint share.
//
// Why tiersim shuts HDF5 down itself: in HDF5 1.10 (Debian 12 ships 1.10.8) a close that fails,
// typically H5Fclose whose last flush hits a full disk, frees the object but keeps its identifier
// (H5F__dest frees the file whatever its flush returned; changed upstream in HDFGroup/hdf5 #2291, 1.14).
// The library's own atexit handler then closes that identifier again and the process dies with
// SIGSEGV after the error was reported. So the library's handler is turned off before its first
// call (H5dont_atexit, from a static initialiser) and tiersim's handler calls H5close() at exit
// unless some close failed; then the library is left as it is (the process is ending, and every
// file was closed or abandoned explicitly before).
#pragma once

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "base/checksum.hpp"
#include "base/error.hpp"
#include "io/safe_files.hpp"

namespace tiersim {

// Closes `id` with `close` (H5Fclose, H5Dclose, ...). A failure is remembered (see above) and
// returned; the identifier must not be used again either way.
herr_t close_hdf5(hid_t id, herr_t (*close)(hid_t));

// True once a close failed in this process (the library will not be shut down at exit).
bool hdf5_close_failed();

// The deepest message of the current HDF5 error stack, which it clears: the system's reason for
// a failed write ("No space left on device") when there is one. "HDF5 error" when the stack is empty.
std::string hdf5_error_reason();

// The library's own printing of error stacks, turned off once; errors become Error messages.
void silence_hdf5_errors();

// Every HDF5 failure is one line: the file, what failed, and hdf5_error_reason().
[[noreturn]] void hdf5_fail(const std::string& file, const std::string& what);
inline hid_t hdf5_check(hid_t id, const std::string& file, const std::string& what) {
  if (id < 0) hdf5_fail(file, what);
  return id;
}
inline void hdf5_check_status(herr_t s, const std::string& file, const std::string& what) {
  if (s < 0) hdf5_fail(file, what);
}

// Owns one HDF5 identifier and closes it through close_hdf5(); close() says whether the close
// worked (for a file: its last flush), the destructor closes what is still open.
class Hdf5Handle {
 public:
  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  Hdf5Handle(Hdf5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  Hdf5Handle& operator=(Hdf5Handle&& o) noexcept {
    if (this != &o) {
      close();
      id_ = o.id_;
      close_ = o.close_;
      o.id_ = -1;
    }
    return *this;
  }
  ~Hdf5Handle() { close(); }
  herr_t close() {
    const herr_t s = id_ >= 0 && close_ ? close_hdf5(id_, close_) : 0;
    id_ = -1;
    return s;
  }
  hid_t get() const { return id_; }
  operator hid_t() const { return id_; }

 private:
  hid_t id_ = -1;
  herr_t (*close_)(hid_t) = nullptr;
};

// A file access property list without HDF5's file lock: ParaView, h5py and `tiersim` itself may
// read the last flushed snapshot while a run is still writing (HDF5 1.10's lock would make them
// fail with "unable to lock file").
Hdf5Handle file_access_plist(const std::string& file);

// Opens an existing HDF5 file read-only (an Error naming it when missing or not HDF5).
Hdf5Handle open_for_reading(const std::string& path);

// Names of the links in one group, in name order (names of any length).
std::vector<std::string> link_names(hid_t group);

// HDF5 calls about one file, each checked: a failure throws Error "FILE: what: reason".
class Hdf5Calls {
 public:
  std::string file;  // every message starts with it
  // The file being written, where its large writes should start the disk as they go: every
  // writeback_every bytes written (a slab of write_fixed, chunks of write_checked), its dirty pages are
  // handed to the disk (start_writeback), so the disk writes while the rest is produced instead of
  // from the close on (the idea of RocksDB's bytes_per_sync). Empty: no pacing.
  std::string writeback;
  static constexpr std::size_t kWritebackBytes = std::size_t(64) << 20;
  std::size_t writeback_every = kWritebackBytes;  // (tests write small slabs)
  mutable std::size_t unpaced = 0;                // written since the disk was last started

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
    if (n > 0)
      hdf5_check_status(H5Dread(dset, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()), file, "cannot read " + name);
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
    Hdf5Handle msp(hdf5_check(H5Screate_simple(int(count.size()), count.data(), nullptr), file, "memory dataspace"),
                   H5Sclose);
    hdf5_check_status(H5Dread(dset, H5T_NATIVE_DOUBLE, msp, fsp, H5P_DEFAULT, out.data()), file, "cannot read " + name);
    return out;
  }

  void write_fixed(hid_t loc, const std::string& name, hid_t filetype, hid_t memtype, const std::vector<hsize_t>& d,
                   const void* data) const {
    Hdf5Handle sp(hdf5_check(H5Screate_simple(int(d.size()), d.data(), nullptr), file, "dataspace for " + name),
                  H5Sclose);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(loc, name.c_str(), filetype, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), file,
                             "cannot create dataset " + name),
                  H5Dclose);
    std::size_t row_bytes = H5Tget_size(memtype);
    for (std::size_t k = 1; k < d.size(); ++k) row_bytes *= std::size_t(d[k]);
    const hsize_t rows = d.empty() ? 1 : d[0];
    if (writeback.empty() || d.empty() || row_bytes * rows < 2 * writeback_every) {
      hdf5_check_status(H5Dwrite(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file, "cannot write " + name);
      return;
    }
    // In slabs of whole rows (planes of a field) of about writeback_every bytes, the disk started
    // after each.
    const hsize_t per = std::max<hsize_t>(1, writeback_every / row_bytes);
    for (hsize_t r0 = 0; r0 < rows; r0 += per) {
      std::vector<hsize_t> start(d.size(), 0), count = d;
      start[0] = r0;
      count[0] = std::min(per, rows - r0);
      Hdf5Handle fsp(hdf5_check(H5Dget_space(ds), file, "dataspace of " + name), H5Sclose);
      hdf5_check_status(H5Sselect_hyperslab(fsp, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr), file,
                        "selection in " + name);
      Hdf5Handle msp(hdf5_check(H5Screate_simple(int(count.size()), count.data(), nullptr), file, "memory dataspace"),
                     H5Sclose);
      hdf5_check_status(H5Dwrite(ds, memtype, msp, fsp, H5P_DEFAULT,
                                 static_cast<const unsigned char*>(data) + std::size_t(r0) * row_bytes),
                        file, "cannot write " + name);
      wrote(std::size_t(count[0]) * row_bytes);
    }
  }

  // Pacing of `writeback` (above): bytes just written.
  void wrote(std::size_t bytes) const {
    if (writeback.empty()) return;
    unpaced += bytes;
    if (unpaced < writeback_every) return;
    start_writeback(writeback);
    unpaced = 0;
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
    Hdf5Handle a(hdf5_check(H5Acreate2(obj, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT), file,
                            "cannot create attribute " + name),
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
    Hdf5Handle a(hdf5_check(H5Acreate2(obj, name.c_str(), t, sp, H5P_DEFAULT, H5P_DEFAULT), file,
                            "cannot create attribute " + name),
                 H5Aclose);
    hdf5_check_status(H5Awrite(a, t, buf.data()), file, "cannot write attribute " + name);
  }

  template <class T>
  void numeric_attr(hid_t obj, const std::string& name, hid_t filetype, hid_t memtype, const std::vector<T>& v) const {
    const hsize_t n = v.size();
    Hdf5Handle sp(hdf5_check(n == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr), file, "dataspace"),
                  H5Sclose);
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

  // An attribute that must hold exactly one value.
  template <class T>
  T read_scalar_attr(hid_t obj, const std::string& name, hid_t memtype) const {
    Hdf5Handle a(hdf5_check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, "cannot read attribute " + name), H5Aclose);
    Hdf5Handle sp(hdf5_check(H5Aget_space(a), file, "cannot read attribute " + name), H5Sclose);
    if (H5Sget_simple_extent_npoints(sp) != 1) throw Error(file + ": attribute " + name + " is not one value");
    T v{};
    hdf5_check_status(H5Aread(a, memtype, &v), file, "cannot read attribute " + name);
    return v;
  }

  // Names of the attributes of obj, in name order (names of any length).
  std::vector<std::string> attribute_names(hid_t obj) const {
    std::vector<std::string> names;
    if (H5Aiterate2(
            obj, H5_INDEX_NAME, H5_ITER_INC, nullptr,
            [](hid_t, const char* n, const H5A_info_t*, void* data) -> herr_t {
              static_cast<std::vector<std::string>*>(data)->push_back(n);
              return 0;
            },
            &names) < 0)
      hdf5_fail(file, "cannot list the attributes");
    return names;
  }

  std::string read_string_attr(hid_t obj, const std::string& name) const {
    Hdf5Handle a(hdf5_check(H5Aopen(obj, name.c_str(), H5P_DEFAULT), file, "cannot open attribute " + name), H5Aclose);
    Hdf5Handle t(hdf5_check(H5Aget_type(a), file, "type of attribute " + name), H5Tclose);
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0)
      throw Error(file + ": attribute " + name + " is not a fixed-length string");
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
    if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) != 0)
      throw Error(file + ": " + name + " is not a fixed-length string");
    std::string s(H5Tget_size(t), '\0');
    hdf5_check_status(H5Dread(ds, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, s.data()), file, "cannot read " + name);
    s.resize(std::strlen(s.c_str()));
    return s;
  }

  // A 1-D array whose every chunk carries a Fletcher32 checksum, so that a changed byte fails the
  // read instead of passing as a value. (An empty array cannot be chunked; it holds no data.)
  template <class T, class A>
  void write_checked(hid_t loc, const std::string& name, hid_t filetype, hid_t memtype,
                     const std::vector<T, A>& v) const {
    write_checked(loc, name, filetype, memtype, v.data(), v.size());
  }
  template <class T>
  void write_checked(hid_t loc, const std::string& name, hid_t filetype, hid_t memtype, const T* data,
                     std::size_t count) const {
    constexpr hsize_t kChunk = hsize_t(1) << 20;  // elements per chunk, each with its checksum
    const std::string what = "cannot write array " + name;
    const hsize_t n = count;
    Hdf5Handle space(hdf5_check(H5Screate_simple(1, &n, nullptr), file, what), H5Sclose);
    Hdf5Handle dcpl(hdf5_check(H5Pcreate(H5P_DATASET_CREATE), file, what), H5Pclose);
    if (n > 0) {
      const hsize_t chunk = std::min(n, kChunk);
      hdf5_check_status(H5Pset_chunk(dcpl, 1, &chunk), file, what);
      hdf5_check_status(H5Pset_fletcher32(dcpl), file, what);
    }
    Hdf5Handle d(hdf5_check(H5Dcreate2(loc, name.c_str(), filetype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT), file, what),
                 H5Dclose);
    if (n > 0) {
      const htri_t same = H5Tequal(filetype, memtype);
      if (same < 0) hdf5_fail(file, what);
      if (same > 0)
        write_checksummed_chunks(d, data, n, std::min(n, kChunk), what);
      else  // a conversion on the way: HDF5 converts, then filters
        hdf5_check_status(H5Dwrite(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), file, what);
    }
    hdf5_check_status(d.close(), file, what);  // writes the chunks still cached
  }

  // The chunks of a 1-D dataset with the Fletcher-32 filter, stored as the filter stores them:
  // HDF5's filter runs on the calling thread at about 1 GB/s, slower than a disk, so the
  // checksums are computed on every core first (base/checksum.hpp) and each finished chunk is
  // handed to H5Dwrite_chunk. Readers see an ordinary filtered dataset and verify it as before.
  // The last chunk is stored whole (HDF5 filters edge chunks at full size), zeros past the end.
  template <class T>
  void write_checksummed_chunks(hid_t d, const T* v, hsize_t n, hsize_t chunk, const std::string& what) const {
    const std::int64_t chunks = std::int64_t((n + chunk - 1) / chunk);
    const std::size_t chunk_bytes = std::size_t(chunk) * sizeof(T);
    std::vector<std::uint32_t> sums(static_cast<std::size_t>(chunks));
#pragma omp parallel for schedule(static)
    for (std::int64_t c = 0; c < chunks - 1; ++c)
      sums[std::size_t(c)] = fletcher32_hdf5(v + std::size_t(c) * std::size_t(chunk), chunk_bytes);
    std::vector<unsigned char> stored(chunk_bytes + sizeof(std::uint32_t));
    for (std::int64_t c = 0; c < chunks; ++c) {
      const hsize_t first = hsize_t(c) * chunk;
      const std::size_t have = std::size_t(std::min(chunk, n - first)) * sizeof(T);
      std::memcpy(stored.data(), v + first, have);
      std::memset(stored.data() + have, 0, chunk_bytes - have);
      std::uint32_t sum = sums[std::size_t(c)];
      if (c == chunks - 1) sum = fletcher32_hdf5(stored.data(), chunk_bytes);
      for (std::size_t b = 0; b < sizeof sum; ++b) stored[chunk_bytes + b] = static_cast<unsigned char>(sum >> (8 * b));
      hdf5_check_status(H5Dwrite_chunk(d, H5P_DEFAULT, 0, &first, stored.size(), stored.data()), file, what);
      wrote(stored.size());
    }
  }

  // A 1-D array of at most max_values values (a damaged shape is an error, not an allocation of
  // petabytes); checksums, where the array has them, are verified by the read. A: the vector's
  // allocator (NoInitAllocator: the values are not zeroed before the read fills them).
  template <class T, class A = std::allocator<T>>
  std::vector<T, A> read_array(hid_t loc, const std::string& name, hid_t memtype, std::uint64_t max_values) const {
    const std::string what = "cannot read array " + name;
    Hdf5Handle d(hdf5_check(H5Dopen2(loc, name.c_str(), H5P_DEFAULT), file, what), H5Dclose);
    Hdf5Handle space(hdf5_check(H5Dget_space(d), file, what), H5Sclose);
    if (H5Sget_simple_extent_ndims(space) != 1) throw Error(file + ": " + name + " is not a 1-D array");
    const hssize_t n = H5Sget_simple_extent_npoints(space);
    if (n < 0) hdf5_fail(file, what);
    if (std::uint64_t(n) > max_values)
      throw Error(file + ": array " + name + " claims " + std::to_string(n) + " values, more than the file holds");
    std::vector<T, A> v(static_cast<std::size_t>(n));
    if (n > 0) hdf5_check_status(H5Dread(d, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), file, what);
    return v;
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
    std::vector<Mapping> m;
    for (const ViewPart& p : parts) {
      Mapping x{p.file, p.dataset, std::vector<hsize_t>(vdims.size(), 0), vdims, vdims};
      if (p.row >= 0) x.source.erase(x.source.begin()), x.start[0] = hsize_t(p.row), x.count[0] = 1;
      m.push_back(std::move(x));
    }
    make_virtual(loc, name, filetype, vdims, m);
  }

  // A virtual dataset `name` of shape vdims made of slabs along its first dimension, each the
  // whole one-dimensional dataset `dataset` of `file` (relative to this file's directory) laid
  // over rows [first, first + rows): a grid's z planes held by the ranks of a run, or a state
  // array's ranges. Values whose file is missing read as NaN.
  struct SlabPart {
    std::string file, dataset;
    hsize_t first = 0, rows = 0;
  };
  void make_slab_view(hid_t loc, const std::string& name, hid_t filetype, const std::vector<hsize_t>& vdims,
                      const std::vector<SlabPart>& parts) const {
    hsize_t row_values = 1;
    for (std::size_t d = 1; d < vdims.size(); ++d) row_values *= vdims[d];
    std::vector<Mapping> m;
    for (const SlabPart& p : parts) {
      Mapping x{p.file, p.dataset, std::vector<hsize_t>(vdims.size(), 0), vdims, {p.rows * row_values}};
      x.start[0] = p.first, x.count[0] = p.rows;
      m.push_back(std::move(x));
    }
    make_virtual(loc, name, filetype, vdims, m);
  }

 private:
  // The whole of `dataset` (of shape `source`) in `file` onto the block at `start` of `count` of
  // the view.
  struct Mapping {
    std::string file, dataset;
    std::vector<hsize_t> start, count, source;
  };
  void make_virtual(hid_t loc, const std::string& name, hid_t filetype, const std::vector<hsize_t>& vdims,
                    const std::vector<Mapping>& maps) const {
    Hdf5Handle vsp(
        hdf5_check(H5Screate_simple(int(vdims.size()), vdims.data(), nullptr), file, "dataspace for " + name),
        H5Sclose);
    Hdf5Handle dcpl(hdf5_check(H5Pcreate(H5P_DATASET_CREATE), file, "property list"), H5Pclose);
    if (H5Tget_class(filetype) == H5T_FLOAT) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      hdf5_check_status(H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &nan), file, "fill value of " + name);
    }
    for (const Mapping& m : maps) {
      Hdf5Handle ssp(
          hdf5_check(H5Screate_simple(int(m.source.size()), m.source.data(), nullptr), file, "dataspace for " + name),
          H5Sclose);
      hdf5_check_status(H5Sselect_hyperslab(vsp, H5S_SELECT_SET, m.start.data(), nullptr, m.count.data(), nullptr),
                        file, "selection for " + name);
      hdf5_check_status(H5Pset_virtual(dcpl, vsp, m.file.c_str(), m.dataset.c_str(), ssp), file,
                        "virtual mapping for " + name);
    }
    hdf5_check_status(H5Sselect_all(vsp), file, "selection for " + name);
    Hdf5Handle ds(hdf5_check(H5Dcreate2(loc, name.c_str(), filetype, vsp, H5P_DEFAULT, dcpl, H5P_DEFAULT), file,
                             "cannot create virtual dataset " + name),
                  H5Dclose);
  }
};

}  // namespace tiersim
