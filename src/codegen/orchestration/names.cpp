// C++ names: per-block declarations without shadowing, Var bindings, and GetSSABaseName.
#include <cctype>

#include "emitter.h"
#include "pypto/ir/error.h"

namespace pypto::codegen {

std::string GetSSABaseName(const std::string& name) {
  // SSA versions of one DSL name share that name (identity is the Var pointer), so the user's
  // spelling is kept: `x_2` stays `x_2`. Only characters C++ rejects are replaced.
  std::string s = name;
  for (auto& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_') ch = '_';
  }
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v" + s;
  return s;
}

namespace orchestration {

namespace {
const std::set<std::string>& reserved() {
  static const std::set<std::string> r = {
      "alignas", "alignof", "and", "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const",
      "constexpr", "continue", "default", "delete", "do", "double", "else", "enum", "explicit", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "not",
      "nullptr", "operator", "or", "private", "protected", "public", "register", "return", "short", "signed",
      "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef", "typename",
      "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor",
      "and_eq", "bitand", "bitor", "compl", "not_eq", "or_eq", "xor_eq", "char8_t", "char16_t", "char32_t",
      "wchar_t", "concept", "requires", "consteval", "constinit", "co_await", "co_return", "co_yield",
      "decltype", "noexcept", "export", "thread_local", "static_assert", "static_cast", "dynamic_cast",
      "reinterpret_cast", "const_cast", "typeid", "reflexpr", "import", "module", "final", "override",
      // macros and library names the generated file sees (<cstdint>, <cmath>, <cerrno>, <cstdio>, ...)
      "NULL", "errno", "assert", "offsetof", "EOF", "stdin", "stdout", "stderr", "std", "main", "INFINITY",
      "NAN", "HUGE_VAL", "HUGE_VALF", "INT8_MIN", "INT8_MAX", "INT16_MIN", "INT16_MAX", "INT32_MIN", "INT32_MAX",
      "INT64_MIN", "INT64_MAX", "UINT8_MAX", "UINT16_MAX", "UINT32_MAX", "UINT64_MAX", "INT_MIN", "INT_MAX",
      "UINT_MAX", "LONG_MIN", "LONG_MAX", "SIZE_MAX", "CHAR_BIT", "FLT_MAX", "FLT_MIN", "DBL_MAX", "DBL_MIN",
      "EXIT_SUCCESS", "EXIT_FAILURE", "RAND_MAX", "BUFSIZ", "M_PI", "M_E", "unix", "linux", "size_t",
      "ptrdiff_t", "intptr_t", "uintptr_t", "va_list", "va_arg", "va_start", "va_end", "setjmp", "longjmp",
      // runtime / entry names generated code relies on
      "orch_args", "Tensor", "Arg", "DataType", "TensorCreateInfo", "TaskOutputTensors", "MixedKernels",
      "PTO2TaskId", "PTO2ScopeMode", "INVALID_KERNEL_ID", "to_u64", "alloc_tensors", "from_tensor_arg",
      "get_tensor_data", "int64_t", "int32_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "uint8_t", "uint16_t"};
  return r;
}
}  // namespace

}  // namespace orchestration

bool IsReservedCppName(const std::string& name) { return orchestration::reserved().count(name) > 0; }

namespace orchestration {

void CppScopes::push() { blocks_.emplace_back(); }

std::vector<std::string> CppScopes::pop() {
  PYPTO_CHECK(!blocks_.empty(), "CppScopes::pop on an empty stack");
  std::vector<std::string> unused;
  for (auto& d : blocks_.back().order) {
    if (d->voidable && !d->used) unused.push_back(d->name);
  }
  blocks_.pop_back();
  return unused;
}

bool CppScopes::visible(const std::string& name) const {
  for (auto& b : blocks_) {
    if (b.decls.count(name)) return true;
  }
  return reserved().count(name) > 0;
}

std::string CppScopes::declare(const std::string& base, bool voidable) {
  std::string name = base;
  for (int k = 1; visible(name); ++k) name = base + "_" + std::to_string(k);
  declare_exact(name, voidable);
  return name;
}

void CppScopes::declare_exact(const std::string& name, bool voidable) {
  PYPTO_CHECK(!blocks_.empty(), "CppScopes::declare outside a block");
  PYPTO_CHECK(!visible(name) || !blocks_.back().decls.count(name), "C++ name '" << name << "' declared twice");
  auto d = std::make_shared<Decl>(Decl{name, false, voidable});
  blocks_.back().decls[name] = d;
  blocks_.back().order.push_back(d);
}

bool CppScopes::is_used(const std::string& name) const {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto d = it->decls.find(name);
    if (d != it->decls.end()) return d->second->used;
  }
  return false;
}

void CppScopes::use(const std::string& name) {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) {
    auto d = it->decls.find(name);
    if (d != it->decls.end()) {
      d->second->used = true;
      return;
    }
  }
}

std::string Emitter::base_name(const ir::Var* v) const { return GetSSABaseName(v->name); }

std::string Emitter::declare(const ir::Var* v, const std::string& base, bool voidable) {
  std::string name = scopes_.declare(base.empty() ? base_name(v) : base, voidable);
  bindings_[v] = Binding{name, {name}};
  return name;
}

void Emitter::bind(const ir::Var* v, Binding b) { bindings_[v] = std::move(b); }

const Binding& Emitter::binding_of(const ir::Var* v) const {
  auto it = bindings_.find(v);
  PYPTO_CHECK(it != bindings_.end(), "orchestration codegen: variable '" << v->name << "' used before its definition");
  return it->second;
}

void Emitter::mark_used(const Binding& b) {
  if (!marking_) return;
  for (auto& n : b.idents) scopes_.use(n);
}

std::string Emitter::ref(const ir::Var* v) {
  auto it = bindings_.find(v);
  if (it == bindings_.end()) {
    PYPTO_CHECK(false, "orchestration codegen: variable '" << v->name << "' used before its definition");
  }
  // A value whose C++ text names a local of a block that has closed (a runtime-allocated
  // output of a pl.submit inside pl.manual_scope(), read after the scope) has no storage any
  // more: the runtime reclaims it when its scope ends.
  for (auto& n : it->second.idents) {
    PYPTO_USER_CHECK(scopes_.visible(n), stmt_span_.known() ? stmt_span_ : v->span,
                     "'" << v->name << "' is used outside the runtime scope that produced it (line " << v->span.line
                         << "): the tensor the runtime allocated for it is reclaimed when that scope ends",
                     "create it before the scope with pl.create_tensor(...) and pass it as the Out argument, "
                     "or move this use into the scope");
  }
  mark_used(it->second);
  return it->second.text;
}

}  // namespace orchestration
}  // namespace pypto::codegen
