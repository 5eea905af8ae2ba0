// What the L2 persistence code (kernels/cuda/l2_window.cu) can tell a test or a benchmark
// without CUDA headers: whether this device can honour --l2-persist on, the device limit as
// it is now, and the access-policy window read back from the stream of every live window.
// Plain C++; a build without CUDA answers "not supported" (kernels/no_cuda).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tiersim {

// Where the CUDA stencil engine puts its window (read when an engine is made):
//  Pair:       one window over both ping-pong groups (the fields this step reads and the ones it
//              writes, one allocation), hitRatio = carve-out / both: a fixed subset of the
//              lines of both persists, so the persisting set never exceeds the carve-out.
//              Measured slower than Output on an H200 at every size (docs/performance.md).
//  Output:     the window follows the group this step writes (retargeted every step), hitRatio
//              = carve-out / one group. The default for heat and Gray-Scott. The
//              lines the last step made persisting stay persisting until reset, so with
//              ping-pong the persisting demand is twice the window once a group exceeds half
//              the carve-out.
//  OutputHalf: Output with hitRatio = carve-out / (2 x one group), accounting for those lines.
//  Fixed:      one window over group A alone (and the table), set once and never moved,
//              hitRatio = carve-out / one group: A is read every step and written every other
//              step, so its lines stay persisting (no churn) while group B streams past them.
//              The default for the wave equation: its update writes u(t - dt) in place, so an
//              Output window would move every step onto the buffer being read and rewritten.
//              Measured on an H100 with fixed boundaries (docs/performance.md): wave 1.1-1.2x
//              at 160-176^3, where Output gave 1.04-1.1x; heat 0.9-1.0x, where Output gave
//              1.03-1.1x.
//  Auto:       Fixed for the wave equation, Output otherwise (the default).
// `tiersim bench l2 --stencil-window` compares them (docs/performance.md, "L2 persistence").
enum class StencilL2Target { Pair, Output, OutputHalf, Fixed, Auto };
void set_stencil_l2_target(StencilL2Target t);
StencilL2Target stencil_l2_target();
// What happens to the window's lines that the hit ratio does not make persisting: streaming
// (evicted first; the CUDA guide's usual choice, the default) or normal (ordinary LRU).
void set_l2_miss_streaming(bool streaming);
bool l2_miss_streaming();
// The share of the carve-out the persisting lines may fill (0 < fill <= 1, read when a window is
// made): the carve-out asked for is the hot set / fill (rounded up by the driver to whole L2
// ways, clamped to the device's maximum) and hitRatio = fill x carve-out / hot set, at most 1.
// Default 0.85: on an H100 a carve-out the persisting lines fill to the brim (fill 1) measured
// up to 0.1x slower than one with slack, and a larger carve-out (0.65-0.75) slower again,
// because the set-aside ways are lost to every other access (a carve-out alone, no window,
// slowed a streaming kernel 2.2x at the maximum). `tiersim bench l2 --fill` compares fills
// (docs/performance.md, "L2 persistence").
constexpr double kDefaultL2Fill = 0.85;
void set_l2_fill(double fill);
double l2_fill();

// Whether --l2-persist on can take effect here; why not where it cannot.
struct L2Support {
  bool supported = false;
  std::string why_not;
  std::size_t l2_bytes = 0, persisting_max = 0, window_max = 0;
};
L2Support l2_persistence_support();

// One live window, as its stream reports it (cudaStreamGetAttribute), and what the window
// object itself holds.
struct L2StreamWindow {
  const void* base = nullptr;
  std::size_t bytes = 0;          // num_bytes read back from the stream (0: no window)
  float hit_ratio = 0;
  bool hit_persisting = false;    // hitProp == cudaAccessPropertyPersisting
  bool miss_streaming = false;    // missProp == cudaAccessPropertyStreaming
  std::size_t carveout = 0;       // the persisting limit this window set (as read back)
};

struct L2ProbeState {
  std::size_t limit_now = 0;                 // cudaLimitPersistingL2CacheSize now
  std::vector<L2StreamWindow> live;          // every window object with persistence on
  // The last window released: its stream's attribute read back after it was cleared, and the
  // limit before it was set and after it was restored.
  bool released_any = false;
  std::size_t released_stream_bytes = 0;
  std::size_t released_limit_before = 0, released_limit_after = 0;
  bool released_reset = false;               // cudaCtxResetPersistingL2Cache succeeded
};
L2ProbeState l2_probe();

// Median time (ms) of a read-only kernel that sums `bytes` of device memory, `reps` launches
// after 3 warm-up launches: a data set of about half the L2 runs from L2, so persisting lines
// left behind by someone would show as a slower probe.
double l2_read_probe_ms(std::size_t bytes, int reps);

// A deliberately bad citizen, for the tests' control experiment: sets the persisting limit to
// `carveout`, reads `bytes` through a persisting window on a private stream, then removes the
// window WITHOUT resetting the persisting lines or restoring the limit. Returns the limit that
// was in place before, to hand to l2_cleanup_after_control().
std::size_t l2_leave_persisting_lines(std::size_t bytes, std::size_t carveout);
void l2_cleanup_after_control(std::size_t previous_limit);

}  // namespace tiersim
