// The two kinds of error (STYLE.md habit 7).
//   UserError:     the program is wrong. Carries a span, a message and an optional help line.
//                  Rendered as `error: <what> --> file:line:col`, the source line, a caret
//                  underline, then `help: ...`. The Python binding maps it to pypto.PyptoError.
//   DependencyError: a UserError for a user edge (`deps=`) that cannot be resolved; Python
//                  pypto.DependencyError, both a PyptoError and a ValueError (the spec's
//                  pypto::ValueError).
//   InternalError: the compiler is wrong (a broken invariant). Raised by PYPTO_CHECK.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>

#include "pypto/ir/span.h"

namespace pypto::ir {

class UserError : public std::runtime_error {
 public:
  UserError(std::string message, Span span, std::string help = "")
      : std::runtime_error(render(message, span, help)),
        message_(std::move(message)), span_(std::move(span)), help_(std::move(help)) {}
  const std::string& message() const { return message_; }
  const Span& span() const { return span_; }
  const std::string& help() const { return help_; }

  // error: <message> --> file:line:col
  //    |
  // 12 |     c = self.kernel_ad(a, b)
  //    |         ^^^^^^^^^^^^^^
  // help: <help>
  static std::string render(const std::string& message, const Span& span, const std::string& help);

 private:
  std::string message_;
  Span span_;
  std::string help_;
};

/// A user edge that cannot be resolved: `throw DependencyError("deps= names TaskId 't' ...", span, help);`
class DependencyError : public UserError {
 public:
  using UserError::UserError;
};

class InternalError : public std::logic_error {
 public:
  explicit InternalError(const std::string& what) : std::logic_error("internal error: " + what) {}
};

}  // namespace pypto::ir

#define PYPTO_CHECK(cond, msg)                                                     \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::ostringstream pypto_check_os_;                                          \
      pypto_check_os_ << msg << " [" << __FILE__ << ":" << __LINE__ << "]";       \
      throw ::pypto::ir::InternalError(pypto_check_os_.str());                     \
    }                                                                              \
  } while (0)

#define PYPTO_USER_CHECK(cond, span, msg, help)                                    \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      std::ostringstream pypto_check_os_;                                          \
      pypto_check_os_ << msg;                                                      \
      throw ::pypto::ir::UserError(pypto_check_os_.str(), (span), (help));         \
    }                                                                              \
  } while (0)
