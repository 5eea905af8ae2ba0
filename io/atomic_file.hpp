// Files written whole or not at all: the text goes to a temporary file beside the target, is
// flushed to disk, and is renamed over the target, so a reader (or a crash) sees either the old or
// the new file, never half of one.
#pragma once

#include <string>

namespace tiersim {

// Writes text to path.tmp, flushes it to disk, and renames it over path. Throws Error naming the path.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace tiersim
