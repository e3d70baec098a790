#pragma once
// The search space of one kernel: its declared parameters, the method guards it offers, and the
// compiler-flag methods kopt offers to any CUDA/CUTLASS kernel; plus the declared constraints.
// A point in the space (a Config) is one value index per dimension.
#include <cstdint>
#include <string>
#include <vector>

#include "core/result.h"
#include "search/annotations.h"
#include "search/method.h"
#include "search/registry.h"

namespace kopt::search {

using Config = std::vector<int>;  // index into Dim::values, one per dimension

enum class DimKind {
  kParam,  // a declared @kopt param
  kGuard,  // a declared @kopt method: values {0, 1} for KOPT_<ID>
  kFlag,   // a compiler-flag method: {0, 1}, or {0, v1, v2...} for a flag_param (0 = off)
};

struct Dim {
  std::string name;  // the param name or the guard macro (KOPT_<ID>)
  DimKind kind = DimKind::kParam;
  ParamKind param_kind = ParamKind::kDefine;  // kParam only
  std::string method;                         // kGuard / kFlag: the method id
  std::vector<int64_t> values;
  int default_index = 0;  // the baseline's value
  std::string where;      // file:line of the annotation ("" for flag methods)
  std::vector<std::string> follows;  // kParam: the names its value scales with (ParamDecl::follows)
  std::string covers;                // kParam: the dim one block of this size covers (ParamDecl::covers)
  std::string when;                  // kParam: the condition over dims under which it matters (ParamDecl::when)
};

struct SearchSpace {
  std::string source_file;
  SourceLanguage language = SourceLanguage::kCuda;
  Backend backend = Backend::kCuda;
  std::vector<Dim> dims;
  std::vector<ConstraintDecl> constraints;
  std::vector<std::string> notes;  // what was left out and why (method above the device's arch, ...)
  // Derived from a plain kernel's code (search/derive.h, the loop's use_derived_space), not declared by its author:
  // its methods (e.g. launch_bounds) were found, not chosen, and the search starts it as a space of parameters.
  bool derived = false;

  int dim_index(std::string_view name) const;       // -1 when absent
  int method_dim(std::string_view method_id) const;  // the guard or flag dimension of a method, -1 when none
  std::vector<std::string> offered_methods() const;  // ids of every guard and flag dimension, in dim order
  Config default_config() const;
  Bindings bindings(const Config& c) const;  // every dimension's name -> its value
  bool in_range(const Config& c) const;
  bool valid(const Config& c) const;  // in range and every constraint holds
  double size() const;                // product of the value counts (before constraints)
  std::string key(const Config& c) const;  // "BM=128,BN=64,KOPT_X=1"
};

struct SpaceOptions {
  Backend backend = Backend::kCuda;
  int arch = 90;  // the device: sm_90 -> 90
  NumericsMode numerics = NumericsMode::kReference;
  bool offer_flag_methods = true;
};

// Errors name the annotation's file:line (an unknown method id comes with a suggestion).
Result<SearchSpace> build_space(const Annotations& ann, const Registry& reg, const SpaceOptions& opts);

// Can this method run on this device at all? min_arch, and arch-specific targets ("sm_90a": sm_90 only).
bool method_fits_arch(const Method& m, int arch);

}  // namespace kopt::search
