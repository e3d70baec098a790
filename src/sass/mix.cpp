#include "sass/mix.h"

#include <functional>

#include "util/strings.h"

namespace kopt::sass {

namespace {

struct ClassRule {
  MixClass cls;
  std::function<bool(std::string_view op, const Instruction& ins)> test;  // op: the opcode without modifiers
};

const std::vector<ClassRule>& rules() {
  auto width_is = [](std::string_view opcode, int bits) {
    return [opcode, bits](std::string_view op, const Instruction& ins) {
      if (op != opcode) return false;
      int w = access_width_bits(ins.opcode);
      return bits == 16 ? w <= 16 : w == bits;
    };
  };
  auto op_in = [](std::initializer_list<std::string_view> names) {
    std::vector<std::string_view> v(names);
    return [v](std::string_view op, const Instruction&) {
      for (auto n : v)
        if (op == n) return true;
      return false;
    };
  };
  static const std::vector<ClassRule> table = {
      {{"LDG.8/16", "global loads of 8 or 16 bits"}, width_is("LDG", 16)},
      {{"LDG.32", "global loads of 32 bits"}, width_is("LDG", 32)},
      {{"LDG.64", "global loads of 64 bits"}, width_is("LDG", 64)},
      {{"LDG.128", "global loads of 128 bits (vectorized)"}, width_is("LDG", 128)},
      {{"STG.8/16", "global stores of 8 or 16 bits"}, width_is("STG", 16)},
      {{"STG.32", "global stores of 32 bits"}, width_is("STG", 32)},
      {{"STG.64", "global stores of 64 bits"}, width_is("STG", 64)},
      {{"STG.128", "global stores of 128 bits (vectorized)"}, width_is("STG", 128)},
      {{"LDS", "shared-memory loads"}, op_in({"LDS"})},
      {{"STS", "shared-memory stores"}, op_in({"STS"})},
      {{"LDSM", "ldmatrix: shared-memory matrix loads"}, op_in({"LDSM"})},
      {{"LDL", "local-memory loads (register spills or local arrays)"}, op_in({"LDL"})},
      {{"STL", "local-memory stores (register spills or local arrays)"}, op_in({"STL"})},
      {{"FFMA", "fp32 fused multiply-adds"}, op_in({"FFMA"})},
      {{"DFMA", "fp64 fused multiply-adds"}, op_in({"DFMA"})},
      {{"HFMA2", "packed fp16/bf16 fused multiply-adds (not the HFMA2.MMA R, -RZ, RZ, .. register-move idiom)"},
       [](std::string_view op, const Instruction& ins) {
         bool move_idiom = ins.operands.size() >= 3 && ins.operands[1] == "-RZ" && ins.operands[2] == "RZ";
         return op == "HFMA2" && !move_idiom;
       }},
      {{"MMA", "warp-level tensor-core instructions (HMMA, IMMA, DMMA, BMMA)"}, op_in({"HMMA", "IMMA", "DMMA", "BMMA"})},
      {{"GMMA", "warpgroup tensor-core instructions (HGMMA, IGMMA, QGMMA, BGMMA)"},
       op_in({"HGMMA", "IGMMA", "QGMMA", "BGMMA"})},
      {{"SHFL", "warp shuffles"}, op_in({"SHFL"})},
      {{"BAR", "block barriers (__syncthreads, named barriers)"}, op_in({"BAR"})},
      {{"LDGSTS", "asynchronous global-to-shared copies (cp.async)"}, op_in({"LDGSTS"})},
      {{"LDGDEPBAR", "cp.async commit groups"}, op_in({"LDGDEPBAR"})},
      {{"TMA", "tensor-memory-accelerator and bulk copies (UTMALDG, UTMASTG, UTMAPF, UTMAREDG, UBLKCP, UBLKRED, UBLKPF)"},
       op_in({"UTMALDG", "UTMASTG", "UTMAPF", "UTMAREDG", "UBLKCP", "UBLKRED", "UBLKPF"})},
  };
  return table;
}

}  // namespace

const std::vector<MixClass>& mix_classes() {
  static const std::vector<MixClass> classes = [] {
    std::vector<MixClass> v;
    for (const auto& r : rules()) v.push_back(r.cls);
    return v;
  }();
  return classes;
}

int InstructionMix::count(std::string_view class_name) const {
  const auto& cls = mix_classes();
  for (size_t i = 0; i < cls.size() && i < counts.size(); ++i)
    if (cls[i].name == class_name) return counts[i];
  return 0;
}

int access_width_bits(std::string_view token) {
  auto parts = util::split(token, '.');
  for (size_t i = 1; i < parts.size(); ++i) {
    const auto& m = parts[i];
    if (m == "128") return 128;
    if (m == "64") return 64;
    if (m == "U8" || m == "S8") return 8;
    if (m == "U16" || m == "S16") return 16;
  }
  return 32;
}

InstructionMix instruction_mix(const SassFunction& f) {
  InstructionMix mix;
  const auto& table = rules();
  mix.counts.assign(table.size(), 0);
  for (const auto& ins : f.instructions) {
    if (ins.never_executes()) continue;
    std::string_view token = ins.opcode;
    std::string_view op = token.substr(0, token.find('.'));
    if (op == "NOP") continue;
    ++mix.total;
    for (size_t i = 0; i < table.size(); ++i)
      if (table[i].test(op, ins)) ++mix.counts[i];
  }
  return mix;
}

util::Json to_json(const InstructionMix& mix) {
  util::Json j = util::Json::object();
  const auto& cls = mix_classes();
  for (size_t i = 0; i < cls.size(); ++i) j[std::string(cls[i].name)] = mix.counts[i];
  j["total"] = mix.total;
  return j;
}

}  // namespace kopt::sass
