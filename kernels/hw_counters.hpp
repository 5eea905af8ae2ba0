// Hardware counters per kernel launch (issue 7, point 3: `--counters N`): DRAM bytes read and
// written, L2 sector hit rate and kernel duration, read through CUPTI's Range Profiler (CUDA 13,
// auto range: one range per kernel launch, kernel replay: CUPTI replays each kernel as many
// times as the metrics need passes, restoring the memory it writes in between).
//
// Plain C++: implemented in kernels/cuda/hw_counters.cu, or as "built without CUDA" in
// kernels/no_cuda/hw_counters_no_cuda.cpp.
//
// Use for one step every N only: between begin() and end() every kernel launch is serialized
// and replayed (several passes, device memory saved and restored), so the step runs many
// times slower and its event timings mean nothing; the counters' own duration_ms is the
// kernel's duration in one pass.
#pragma once

#include <cstddef>
#include <iomanip>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace tiersim {

struct KernelCounters {
  // CUDA function name, demangled where it was mangled. CUDA 13's auto ranges are named "0",
  // "1", ...; the name comes from CUPTI's launch callbacks, and stays the index where another
  // CUPTI subscriber (a tool) holds the callbacks.
  std::string kernel;
  double dram_read_bytes = 0, dram_write_bytes = 0;
  double l2_hit_rate = 0;  // 0..1 (lts__t_sector_hit_rate; clamped: a store-only kernel can read 100.4%)
  double duration_ms = 0;  // gpu__time_duration of the kernel (one pass)
};

class HardwareCounters {
 public:
  virtual ~HardwareCounters() = default;
  // Starts collecting: every kernel launched on the device until end() is one range.
  // Throws tiersim::Error when CUPTI refuses (e.g. another profiler took the device).
  virtual void begin() = 0;
  // Stops, and returns one entry per kernel launch in launch order (kernel = the CUDA function
  // name, demangled or as CUPTI reports it). Synchronizes the device. Launches beyond the
  // capacity given to make_hardware_counters are dropped (a warning on stderr says how many).
  virtual std::vector<KernelCounters> end() = 0;
};

// nullptr with *why_not set ("profiling not permitted (ERR_NVGPUCTRPERM)", "built without
// CUPTI", "no GPU", ...) when counters cannot be read here. The factory profiles one tiny
// kernel to prove the whole chain (permissions, the nvperf host library, the metrics) works,
// so a caller says "why_not" once and carries on without counters. max_kernels_per_range:
// the most kernel launches one begin()/end() records.
std::unique_ptr<HardwareCounters> make_hardware_counters(std::string* why_not, std::size_t max_kernels_per_range = 256);

// A known memory-bound operation for tests and checks of the counters: allocates `bytes` of
// input (rounded down to 16 bytes) and as much output, fills the input (kernel
// "tiersim_counter_probe_fill", writes `bytes`), then copies it with float4 loads and stores
// (kernel "tiersim_counter_probe_copy", reads and writes `bytes`), checks a few values, frees.
// Returns the copy kernel's time in ms (CUDA events; under begin()/end() that includes replay).
// Throws tiersim::Error without a usable GPU.
double run_counter_probe_copy(std::size_t bytes);

// One row per kernel: name, DRAM read and write MB, L2 hit %, duration, DRAM GB/s. For
// debugging and logs; no CLI involved.
inline void print_counters_table(std::ostream& os, const std::vector<KernelCounters>& rows) {
  std::ostringstream out;
  out << std::left << std::setw(44) << "kernel" << std::right << std::setw(14) << "DRAM rd MB" << std::setw(14)
      << "DRAM wr MB" << std::setw(9) << "L2 hit%" << std::setw(12) << "ms" << std::setw(11) << "DRAM GB/s" << '\n';
  out << std::fixed;
  for (const KernelCounters& r : rows) {
    std::string name = r.kernel;
    if (name.size() > 43) name = name.substr(0, 40) + "...";
    const double gbs = r.duration_ms > 0 ? (r.dram_read_bytes + r.dram_write_bytes) / (r.duration_ms * 1e6) : 0;
    out << std::left << std::setw(44) << name << std::right << std::setprecision(3) << std::setw(14)
        << r.dram_read_bytes / 1e6 << std::setw(14) << r.dram_write_bytes / 1e6 << std::setprecision(1) << std::setw(9)
        << 100.0 * r.l2_hit_rate << std::setprecision(4) << std::setw(12) << r.duration_ms << std::setprecision(1)
        << std::setw(11) << gbs << '\n';
  }
  os << out.str();
}

}  // namespace tiersim
