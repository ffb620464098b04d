#pragma once
// Program + Schedule -> Network: concrete (sparse) weight matrices, layer by layer, with the
// names of every head, MLP block and residual dimension carried along.
#include "ir/program.hpp"
#include "ir/schedule.hpp"
#include "krc/runtime/network.hpp"

namespace krc {

Network assemble(const Program& program, const Schedule& schedule);

}  // namespace krc
