#include "sim/model.hpp"

#include "io/checkpoint.hpp"

namespace tiersim {

ModelState Model::save_state() { throw Error(name() + ": checkpoints are not supported for this model"); }
void Model::load_state(const ModelState&) { throw Error(name() + ": restarts are not supported for this model"); }
void Model::inject_nan(std::int64_t) { throw Error(name() + ": NaN injection is not supported for this model"); }

}  // namespace tiersim
