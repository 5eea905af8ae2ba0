// The time step the run loop is in, stamped on every kernel record at launch, so records read
// later (without waiting for the GPU) still land on their own step. Whether a launch is timed
// is the strategy's (Tuning::timed_at).
#pragma once

#include <cstdint>

namespace tiersim {

void set_telemetry_step(std::int64_t step);
std::int64_t telemetry_step();

}  // namespace tiersim
