// A benchmark's --csv file: its rows collected as they are measured and written whole at the end
// (io/safe_files.hpp: never half a file, never through a link). The path is checked first, so
// that a sweep does not run for nothing; a sweep that stops on an error writes no file.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>

#include "base/error.hpp"
#include "io/safe_files.hpp"

namespace tiersim {

class BenchCsv {
 public:
  // path "": no file. Else header is its first line (with its newline).
  BenchCsv(std::string path, const std::string& header) : path_(std::move(path)) {
    if (path_.empty()) return;
    const std::filesystem::path p(path_);
    const std::string dir = p.parent_path().empty() ? "." : p.parent_path().string();
    if (path_type(path_) == PathType::Directory) throw Error(path_ + ": is a directory, not a CSV file");
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec) || ::access(dir.c_str(), W_OK) != 0)
      throw Error(path_ + ": cannot write the CSV file there (" + dir + " is not a writable directory)");
    rows_ << header;
  }
  explicit operator bool() const { return !path_.empty(); }
  std::ostringstream& rows() { return rows_; }
  // The file, whole; nothing where no path was given.
  void write() const {
    if (!path_.empty()) write_file_atomically(path_, rows_.str());
  }

 private:
  std::string path_;
  std::ostringstream rows_;
};

}  // namespace tiersim
