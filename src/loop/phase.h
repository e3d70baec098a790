#pragma once
// Optimizer::Phase: adds the wall time of a scope to state.phase_seconds[name], exclusively: a nested phase (a profile
// inside the gates) pauses the enclosing one, so the phases add up to the run's wall time (run_dir.cpp).
#include <string>

#include "loop/optimizer.h"

namespace kopt::loop {

class Optimizer::Phase {
 public:
  Phase(Optimizer& o, std::string n);
  ~Phase();
  Phase(const Phase&) = delete;
  Phase& operator=(const Phase&) = delete;

 private:
  Optimizer& o_;
  bool active_;  // on the loop's own thread; a measuring slot's thread (several GPUs) keeps no phases
};

}  // namespace kopt::loop
