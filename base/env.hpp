// Every environment variable tiersim reads. None is needed to run a case (the case file and the
// flags say all a run does): they are overrides for kernel sweeps and hooks for tests, named here
// so that one place lists them. (HOME, USER and LOGNAME are read as the system sets them.)
#pragma once

namespace tiersim::env {

// Sweeps (`tiersim bench`; docs/performance.md, "How to reproduce").
// K,BY,P,RY,MINB[,CX,CY]: a stencil tile shape from the sweep table (a build with
// -DTIERSIM_STENCIL_SWEEP_SHAPES=ON; kernels/cuda/stencil_update.cpp).
inline constexpr const char* kStencilShape = "TIERSIM_STENCIL_SHAPE";
// BY,RY,P: a temporally blocked pass's shape (kernels/cuda/stencil_temporal.cu).
inline constexpr const char* kTemporalShape = "TIERSIM_TEMPORAL_SHAPE";
// N: at most N regions (bands) side by side in a temporally blocked pass's last x column; 1: none
// (TemporalOptions::bands, kernels/cuda/stencil_temporal.cu).
inline constexpr const char* kTemporalBands = "TIERSIM_TEMPORAL_BANDS";
// chunks[:N] | shares[:N]: how a temporally blocked pass's blocks share the work, z chunks (of N
// planes) or blocks walking shares (N blocks; heat at R = 1), instead of the driver's choice
// (TemporalOptions::z_chunk, blocks; kernels/cuda/stencil_temporal.cu).
inline constexpr const char* kTemporalSplit = "TIERSIM_TEMPORAL_SPLIT";
// none|64|128|256: the L2 promotion of every bulk-copy ring's tensor maps, instead of each ring's
// own (kTmaPromote, kernels/cuda/stencil_ring.cuh; kernels/cuda/stencil_tensor_map.cpp).
inline constexpr const char* kTmaL2Promotion = "TIERSIM_TMA_L2_PROMOTION";
// 1: --counters prints the chip, its passes and each range's names (kernels/cuda/hw_counters.cu).
inline constexpr const char* kCountersVerbose = "TIERSIM_COUNTERS_VERBOSE";

// Tests only.
// A step at which the run puts a NaN into its state (the non-finite check's test).
inline constexpr const char* kInjectNanAtStep = "TIERSIM_INJECT_NAN_AT_STEP";
// where[:step][:KILL]: the run raises SIGTERM (SIGKILL with :KILL) on itself there (sim/stop_signal.hpp).
inline constexpr const char* kTestSignalAt = "TIERSIM_TEST_SIGNAL_AT";

}  // namespace tiersim::env
