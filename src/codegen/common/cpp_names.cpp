// The one C++ naming rule and reserved-word table of the code generators
// (include/pypto/codegen/orchestration.h: GetSSABaseName, IsReservedCppName). The
// orchestration and HOST emitters declare no name this table holds; kernel_cpu consults it
// next to its own kernel-local names.
#include <cctype>
#include <cstdint>
#include <unordered_set>
#include <string>

#include "pypto/codegen/orchestration.h"

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

std::string SourceStem(const std::string& name) {
  constexpr size_t kMaxStem = 100;
  if (name.size() <= kMaxStem) return name;
  uint64_t hash = 1469598103934665603ull;   // FNV-1a: stable across runs and platforms
  for (unsigned char c : name) hash = (hash ^ c) * 1099511628211ull;
  size_t cut = kMaxStem;
  while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;   // not inside a character
  static const char kHex[] = "0123456789abcdef";
  std::string stem = name.substr(0, cut) + "_";
  for (int shift = 60; shift >= 0; shift -= 4) stem += kHex[(hash >> shift) & 0xF];
  return stem;
}

namespace {

const std::unordered_set<std::string>& reserved() {
  static const std::unordered_set<std::string> r = {
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
      "get_tensor_data", "int64_t", "int32_t", "uint32_t", "uint64_t", "int8_t", "int16_t", "uint8_t", "uint16_t",
      "ChipStorageTaskArgs", "ChipTensorArg", "CoreTaskPredicate", "TaskId", "ScopeMode", "Runtime",
      "RuntimeOptions", "SmallVec", "LaunchSpec", "OrchestrationEntry", "SIMPLER_SCOPE", "make_tensor_external",
      "set_tensor_data", "float_to_half", "half_to_float", "float_to_bfloat16", "bfloat16_to_float",
      "rt_submit_task", "rt_submit_aic_task", "rt_submit_aiv_task", "rt_submit_dummy_task",
      "aicpu_orchestration_entry", "aicpu_orchestration_config", "aicpu_thread_num",
      // the runtime's helpers and macros the generated code calls after a local's declaration
      "pto2", "pto2_slice_u32", "pto2_extent_u32", "pto2_check_arg_extent", "pto2_chunk_stride", "pto2_int_arg",
      "pto2_range_count", "pto2_entry_fn", "pto2_kernel_desc", "pto2_c_api", "PTO2_SCOPE", "PTO2_SCOPE_CAT",
      "PTO2_SCOPE_CAT2", "PTO2_SCOPE_IMPL", "PTO2_SOURCE_SITE", "PTO2_TENSOR_NAMES", "PTO2OrchestrationConfig", "PTO2KernelContext",
      "PTO2ScopeGuard", "PTO2Storage", "PTO2_MAX_DIMS",
      // the generated file's own macros (a long function's chunks and unoptimised statements)
      "PYPTO_CALL_CHUNK", "PYPTO_UNOPTIMISED",
      // the run-time DSL checks (pto2/orchestration.h): a local of one of these names hid the
      // function from the calls after it, and the generated C++ did not compile
      "pto2_divisor", "pto2_array_slot", "pto2_array_slot_out_of_range", "pto2_array_slot_out_of_range_unsigned", "pto2_floordiv", "pto2_shl", "pto2_shr", "pto2_mod", "pto2_view_at", "pto2_float_to_int", "pto2_division_by_zero",
      "pto2_float_floordiv", "pto2_reshape_check", "pto2_name_tensors", "pto2_float_mod", "pto2_slice_extent", "pto2_assert", "pto2_assertion_failed", "pto2_group_signal", "pto2_group_wait",
      // the L3 API HOST code calls (pto_l3_api.h)
      "TaskArgs", "TaskHandle", "submit_next_level", "submit_barrier"};
  return r;
}

}  // namespace

// Exact names only: a prefix rule ("pto2*") would also reserve every suffixed fallback
// (pto2_slice_u32_1, ...) and the declare loop would never find a free name.
bool IsReservedCppName(const std::string& name) { return reserved().count(name) > 0; }

std::string UnreservedCppBase(const std::string& base) {
  // C++ reserves every name containing `__` and every name starting `_` + capital (the
  // implementation's __LINE__, _Pragma, __thread, ...: no table can list them all). So a run of
  // underscores becomes one (a non-ASCII character, several bytes each replaced by `_`, made
  // `caf__` of `café`), the base ends in no underscore (the declarers append `_1`), and one
  // starting `_` + capital gets a `v` (`__LINE__` -> `v_LINE`; `__x` -> `_x`, a valid local).
  std::string s;
  for (char c : base) {
    if (c == '_' && !s.empty() && s.back() == '_') continue;
    s += c;
  }
  while (s.size() > 1 && s.back() == '_') s.pop_back();
  if (s.empty() || (s.size() >= 2 && s[0] == '_' && std::isupper(static_cast<unsigned char>(s[1])))) s = "v" + s;
  return s;
}

}  // namespace pypto::codegen
