// What io/snapshots.cpp and io/checkpoint.cpp share about the HDF5 library itself: owning and
// closing identifiers, one-line errors, and the library's shutdown at exit.
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

#include <string>

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

}  // namespace tiersim
