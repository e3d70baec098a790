#pragma once
// Instruction mix of one kernel: counts by class, from its SASS. Pure.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sass/listing.h"
#include "util/json_io.h"

namespace kopt::sass {

struct MixClass {
  std::string_view name;         // "LDG.128", "LDL (spill)", ...
  std::string_view description;  // what it counts
};
// The classes, in report order.
const std::vector<MixClass>& mix_classes();

struct InstructionMix {
  std::vector<int> counts;  // one per mix_classes() entry
  int total = 0;            // every instruction that can execute, NOP excluded
  int count(std::string_view class_name) const;  // 0 for an unknown name
};

// Width in bits of a load/store from its modifiers: ".128" -> 128, ".64" -> 64, ".U8"/".S8" -> 8,
// ".U16"/".S16" -> 16, otherwise 32.
int access_width_bits(std::string_view opcode_token);

// Instructions that never execute ("@!PT ...") are not counted.
InstructionMix instruction_mix(const SassFunction& f);
util::Json to_json(const InstructionMix& mix);

}  // namespace kopt::sass
