#pragma once
// Failures are data: low-level functions return Result<T>; only the command layer turns an Error into a
// message and an exit code.
#include <string>
#include <utility>
#include <variant>

#include "core/exit_code.h"

namespace kopt {

struct Error {
  ExitCode code = ExitCode::kOther;
  std::string message;
};

inline Error input_error(std::string msg) { return {ExitCode::kInput, std::move(msg)}; }
inline Error gate_error(std::string msg) { return {ExitCode::kGate, std::move(msg)}; }
inline Error validation_error(std::string msg) { return {ExitCode::kValidation, std::move(msg)}; }
inline Error internal_error(std::string msg) { return {ExitCode::kOther, std::move(msg)}; }

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace kopt

// Propagate an error from an expression returning Result<T>; binds the value to `var`.
#define KOPT_CONCAT_INNER(a, b) a##b
#define KOPT_CONCAT(a, b) KOPT_CONCAT_INNER(a, b)
#define KOPT_TRY_ASSIGN_IMPL(tmp, var, expr) \
  auto tmp = (expr);                         \
  if (!tmp.ok()) return tmp.error();         \
  var = std::move(tmp).value()
#define KOPT_TRY_ASSIGN(var, expr) KOPT_TRY_ASSIGN_IMPL(KOPT_CONCAT(kopt_try_, __LINE__), var, expr)
#define KOPT_TRY(expr)                              \
  do {                                              \
    auto kopt_try_tmp = (expr);                     \
    if (!kopt_try_tmp.ok()) return kopt_try_tmp.error(); \
  } while (0)
