#include "sim/output_dir.hpp"

#include <algorithm>
#include <fstream>
#include <vector>

#include "base/error.hpp"
#include "io/snapshot_readers.hpp"

namespace tiersim {
namespace fs = std::filesystem;

std::string default_out_dir(const std::string& case_path) {
  return (fs::path("out") / fs::path(case_path).stem()).string();
}

// What `tiersim run` writes into its output directory, and what tiersim's scripts add there
// (scripts/render: frames/, scripts/plot telemetry: *.png), each also as a killed write's .tmp.
bool is_tiersim_output(std::string name) {
  static const char* const kNames[] = {"snapshots.h5",  "snapshots.xmf", "snapshots.d", "checkpoint.h5",
                                       "case.toml",     "telemetry.csv", "summary.json", "counters.csv",
                                       "particles.pvd", "fields.pvd",    "vtk",          ".tiersim-write-test",
                                       "frames",        "bandwidth.png", "roofline.png"};
  if (name.ends_with(".tmp")) name.resize(name.size() - 4);
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

// Why --force may not replace the non-empty directory `dir` (empty: it may). Only a tiersim run
// holding nothing else is replaced: its snapshots.h5 names tiersim as its H5MD creator (or, for a
// run killed before its first index, it has snapshots.d/), and every entry is a name tiersim
// writes. So `--out . --force` in a source tree, or `--out ~ --force`, deletes nothing.
std::string why_not_replaceable(const fs::path& dir) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!is_tiersim_output(name)) return "it holds '" + name + "', which is not tiersim output";
  }
  if (ec) return "cannot list it: " + ec.message();
  const fs::path h5 = dir / "snapshots.h5";
  if (fs::exists(h5, ec)) {
    try {
      read_run_info(h5.string());  // throws unless /h5md/creator is tiersim
    } catch (const Error&) {
      return "its snapshots.h5 was not written by tiersim";
    }
    return "";
  }
  if (fs::is_directory(dir / "snapshots.d", ec)) return "";
  return "it holds no snapshots.h5 written by tiersim";
}

void prepare_out_dir(const std::string& dir, bool force, const std::function<std::string(const fs::path&)>& why_not) {
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) throw Error(dir + ": output path exists and is not a directory");
    if (!fs::is_empty(dir, ec)) {
      if (!force) throw Error(dir + ": output directory exists and is not empty (use --force to replace it)");
      const std::string why = why_not(dir);
      if (!why.empty())
        throw Error(dir + ": not replaced: --force replaces only an empty directory or a tiersim run, and " + why);
      // Entry by entry: the directory itself stays (it may be the working directory).
      std::vector<fs::path> entries;
      for (const auto& e : fs::directory_iterator(dir, ec)) entries.push_back(e.path());
      for (const auto& e : entries) {
        fs::remove_all(e, ec);
        if (ec) throw Error(e.string() + ": cannot remove the old output: " + ec.message());
      }
    }
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(dir + ": cannot create output directory: " + ec.message());
  const std::string probe = (fs::path(dir) / ".tiersim-write-test").string();
  if (!std::ofstream(probe)) throw Error(dir + ": output directory is not writable");
  fs::remove(probe, ec);
}

}  // namespace tiersim
