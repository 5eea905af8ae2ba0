// A model built for a restart (ModelSetup::restart: no initial state made, uploaded or given a
// force pass) and given a checkpoint's state continues it as the model that wrote the state does,
// bit for bit: the state, the clock, the reference of the conservation figure, and the wave's
// point source, which comes from the case and acts in the steps checked. The CPU backend in the
// unit tests, CUDA in the GPU tests (the same check).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "io/checkpoint.hpp"
#include "sim/case.hpp"
#include "sim/model.hpp"

namespace tiersim {

inline void expect_restart_continues_bit_for_bit(const std::string& case_text, const std::string& backend) {
  const Case c = Case::parse(case_text + "\n[strategy]\nbackend = \"" + backend + "\"\n", "restart.toml");
  const Strategy s = strategy_from_case(c);
  auto make = [&](bool restart) {
    return c.get_string("run.model") == "nbody" ? make_nbody_model(c, s, ModelSetup{false, restart})
                                                : make_stencil_model(c, s, ModelSetup{false, restart});
  };
  const double dt = c.get_float("run.dt");
  auto original = make(false);
  (void)original->observe();  // the reference of the conservation figure: step 0's
  for (int i = 0; i < 10; ++i) original->step(dt);
  const ModelState at10 = original->save_state();

  auto restarted = make(true);
  for (const auto& [part, seconds] : restarted->startup_parts()) {
    EXPECT_NE(part, "initial state") << "a restart made an initial state (" << seconds << " s)";
    EXPECT_NE(part, "state uploaded") << "a restart uploaded an initial state (" << seconds << " s)";
  }
  restarted->load_state(at10);
  for (int i = 0; i < 10; ++i) original->step(dt), restarted->step(dt);
  const ModelState a = original->save_state(), b = restarted->save_state();
  ASSERT_EQ(a.arrays.size(), b.arrays.size());
  int changed = 0;  // arrays the steps changed (equal arrays that never changed would test nothing)
  for (std::size_t i = 0; i < a.arrays.size(); ++i) {
    EXPECT_EQ(a.arrays[i].first, b.arrays[i].first);
    EXPECT_TRUE(a.arrays[i].second == b.arrays[i].second) << "array " << a.arrays[i].first << " differs";
    changed += a.arrays[i].second != at10.arrays[i].second;
  }
  EXPECT_GE(changed, 2) << "the steps changed fewer than two arrays of the state";
  EXPECT_EQ(a.scalars, b.scalars);
  const Observables oa = original->observe(), ob = restarted->observe();
  EXPECT_EQ(oa, ob);
  EXPECT_EQ(original->conservation(oa), restarted->conservation(ob));
}

// The cases: the wave driven by its point source (acting in steps 10-20: its peak is at step
// 150) and a Plummer sphere.
inline const char* kRestartWaveCase =
    "[run]\nmodel = \"stencil\"\ndt = 8e-4\n[grid]\nn = 12\nradius = 2\n[stencil]\nequation = \"wave\"\n"
    "[wave]\ninitial = \"source\"\n";
inline const char* kRestartNbodyCase = "[run]\nmodel = \"nbody\"\ndt = 0.01\n[nbody]\ncount = 96\nic = \"plummer\"\n";

}  // namespace tiersim
