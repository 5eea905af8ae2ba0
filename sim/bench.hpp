// `tiersim bench nbody|stencil`: each model registers its own benchmark subcommand.
#pragma once

namespace CLI {
class App;
}

namespace tiersim {
void register_bench_nbody(CLI::App& bench);    // sim/bench_nbody.cpp
void register_bench_stencil(CLI::App& bench);  // sim/bench_stencil.cpp
void register_bench_l2(CLI::App& bench);       // sim/bench_l2.cpp
}  // namespace tiersim
