// A restart's model makes no initial state and continues the checkpoint's state bit for bit, on
// the GPU (tests/unit/model_restart.hpp; skipped, with the reason, where no GPU is usable).
#include "../unit/model_restart.hpp"
#include "gpu_test.hpp"

using namespace tiersim;

TEST(ModelRestartGpu, WaveWithItsPointSourceContinuesBitForBit) {
  SKIP_WITHOUT_GPU();
  expect_restart_continues_bit_for_bit(kRestartWaveCase, "cuda");
}

TEST(ModelRestartGpu, NbodyContinuesBitForBitWithoutAFirstForcePass) {
  SKIP_WITHOUT_GPU();
  expect_restart_continues_bit_for_bit(kRestartNbodyCase, "cuda");
}
