#include "io/hdf5_library.hpp"

#include <atomic>
#include <cstdlib>
#include <filesystem>

#include "base/error.hpp"

namespace tiersim {

namespace {

std::atomic<bool> g_close_failed{false};

void shut_down_hdf5() {
  // A failed close left an identifier over freed memory: H5close() would close it again.
  if (!g_close_failed.load()) H5close();
}

// Before main: H5dont_atexit only takes effect if no HDF5 call has initialised the library yet
// (none happens during static initialisation). Linked in with every user of close_hdf5().
const bool g_exit_handler_installed = [] {
  H5dont_atexit();
  std::atexit(shut_down_hdf5);
  return true;
}();

}  // namespace

// Under LeakSanitizer (the asan preset): HDF5 1.10 loses memory of its own on error paths (a file
// whose close failed, a damaged file it gave up opening), which nothing outside it can free.
// Only allocations made through libhdf5 are exempt; the rest of tiersim's are checked as before.
extern "C" const char* __lsan_default_suppressions() { return "leak:libhdf5"; }
extern "C" const char* __lsan_default_options() { return "print_suppressions=0"; }  // errors stay one line

herr_t close_hdf5(hid_t id, herr_t (*close)(hid_t)) {
  const herr_t s = close(id);
  if (s < 0) g_close_failed.store(true);
  return s;
}

bool hdf5_close_failed() { return g_close_failed.load(); }

std::string hdf5_error_reason() {
  std::string deepest;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_DOWNWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        if (e->desc && *e->desc) *static_cast<std::string*>(data) = e->desc;
        return 0;
      },
      &deepest);
  H5Eclear2(H5E_DEFAULT);
  // The VFD reports system errors as "... errno = 28, error message = 'No space left on device', ...".
  const std::string key = "error message = '";
  const auto p = deepest.find(key);
  if (p != std::string::npos) {
    const auto q = deepest.find('\'', p + key.size());
    return deepest.substr(p + key.size(), q == std::string::npos ? std::string::npos : q - p - key.size());
  }
  return deepest.empty() ? "HDF5 error" : deepest;
}

void silence_hdf5_errors() {
  // Per thread: a thread-safe HDF5 keeps an error stack (and its printing) per thread, and the
  // output thread writes files too.
  thread_local const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    return true;
  }();
  (void)done;
}

[[noreturn]] void hdf5_fail(const std::string& file, const std::string& what) {
  throw Error(file + ": " + what + ": " + hdf5_error_reason());
}

Hdf5Handle file_access_plist(const std::string& file) {
  Hdf5Handle fapl(hdf5_check(H5Pcreate(H5P_FILE_ACCESS), file, "property list"), H5Pclose);
  hdf5_check_status(H5Pset_file_locking(fapl, 0, 1), file, "file locking property");
  return fapl;
}

Hdf5Handle open_for_reading(const std::string& path) {
  silence_hdf5_errors();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw Error(path + ": no such file");
  Hdf5Handle fapl = file_access_plist(path);
  return Hdf5Handle(hdf5_check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl), path, "cannot open as HDF5"), H5Fclose);
}

std::vector<std::string> link_names(hid_t group) {
  std::vector<std::string> names;
  H5Literate(
      group, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
      [](hid_t, const char* n, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->push_back(n);
        return 0;
      },
      &names);
  return names;
}

}  // namespace tiersim
