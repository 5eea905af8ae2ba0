// How tiersim writes files: whole or not at all, and never through a link.
//
// A file is written to a temporary name beside its target (the target's name + ".tmp"), flushed
// to disk and renamed over the target: a reader, or a run killed at any moment, sees the old file
// or the new one, never half of one, and a symbolic link at the target is replaced, not followed.
// The temporary file is created exclusively (O_EXCL | O_NOFOLLOW, after removing whatever had its
// name): a link planted under the temporary name is never written through either. A file that
// grows (telemetry.csv) is appended to only when it is a regular file, never through a link. The
// subdirectories a run writes into (snapshots.d/, vtk/) must be directories of their own, not
// links to somewhere else.
#pragma once

#include <cstdint>
#include <string>

namespace tiersim {

// Writes text to path.tmp, flushes it to disk, and renames it over path. Throws Error naming the path.
void write_file_atomically(const std::string& path, const std::string& text);

// The name a file is written under before it is renamed over `path`: path.tmp.
std::string temporary_name(const std::string& path);

// Prepares path.tmp for a library that creates the file itself by name (HDF5): removes whatever
// has that name (a file, or a link, never what it points to) so that an exclusive create
// (H5F_ACC_EXCL: O_CREAT | O_EXCL, which fails on a link) can follow. Returns path.tmp.
std::string fresh_temporary_name(const std::string& path);

// Flushes the file at `path` to disk (before the rename that publishes it).
void sync_file(const std::string& path);

// Starts writing the file's dirty pages to the disk and returns at once (Linux
// sync_file_range): the disk works on a step file while the writer builds the checkpoint, whose
// fsync then finds less left to write. Best effort: durability comes from the fsyncs.
void start_writeback(const std::string& path) noexcept;

// Renames from over to (both in the same directory): a link at `to` is replaced, not followed.
void publish(const std::string& from, const std::string& to);

// The size of the file at `path` in bytes (0 where it cannot be read).
std::uint64_t file_bytes(const std::string& path);

// `path` is a directory and not a symbolic link (Error naming it otherwise); with create, it is
// made first when missing.
void require_real_directory(const std::string& path, bool create = false);

// What is at `path` without following a link: missing, a regular file, a directory, a link, or
// something else (a device, a FIFO, a socket).
enum class PathType { Missing, File, Directory, Link, Other };
PathType path_type(const std::string& path);

// Appends text to the file at `path` (telemetry.csv, counters.csv), created when missing, in one
// write: only to a regular file, never through a link. Returns the file's size after the append.
// Throws Error naming the file.
std::uint64_t append_to_file(const std::string& path, const std::string& text);

}  // namespace tiersim
