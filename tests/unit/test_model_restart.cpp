// A restart's model makes no initial state and continues the checkpoint's state bit for bit (CPU
// backend; tests/gpu/test_model_restart_gpu.cpp runs the same check on CUDA).
#include "model_restart.hpp"

using namespace tiersim;

TEST(ModelRestart, WaveWithItsPointSourceContinuesBitForBit) {
  expect_restart_continues_bit_for_bit(kRestartWaveCase, "cpu");
}

TEST(ModelRestart, NbodyContinuesBitForBitWithoutAFirstForcePass) {
  expect_restart_continues_bit_for_bit(kRestartNbodyCase, "cpu");
}
