// The structured control-flow printer's loop headers and source sites (pypto/codegen/control_flow_printer.h;
// the printer itself is a template there).
#include "pypto/codegen/control_flow_printer.h"

#include <cctype>
#include <cstdint>
#include <string>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/ir/const_integer.h"

namespace pypto::codegen::common {

std::vector<std::string> CppIdentifiers(const std::string& text) {
  auto ident_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (!ident_char(text[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    while (j < text.size() && ident_char(text[j])) ++j;
    const bool member = i > 0 && (text[i - 1] == '.' || text[i - 1] == ':' || (i > 1 && text.compare(i - 2, 2, "->") == 0));
    if (!member && !std::isdigit(static_cast<unsigned char>(text[i]))) out.push_back(text.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string CppStringBody(const std::string& text) {
  std::string body;
  for (char c : text) {
    if (c == '"' || c == '\\') body += '\\';
    // "??=" would be a trigraph, which g++ reports (-Wtrigraphs: a failed -Werror build for an
    // assert message "too big??!" or a file "??=x.py"); "?\?=" is the same text
    if (c == '?' && !body.empty() && body.back() == '?') body += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) body += c;
  }
  return body;
}

std::string CppSourceSiteArgs(const ir::Span& span) {
  return "\"" + CppStringBody(ir::source_file_name(span.file)) + "\", " + std::to_string(span.line);
}

std::string CppAssertArgs(const ir::Call& assert_call) {
  const std::string* message = nullptr;
  if (auto it = assert_call.attrs.find("message"); it != assert_call.attrs.end()) message = std::get_if<std::string>(&it->second);
  return "\"" + CppStringBody(message ? *message : std::string()) + "\", " + CppSourceSiteArgs(assert_call.span);
}

std::string CppArraySlot(const std::string& text, const ir::ExprPtr& index, int64_t size, const ir::Span& span) {
  const std::string bare = StripOuterParens(text);
  // A constant index was checked when the op was built (array_ops.cpp); one out of range here
  // (IR built by other means) keeps the run-time check.
  if (auto k = ir::ConstIntegerValue(index); k && *k >= 0 && *k < size) return bare;
  return "pto2_array_slot(" + bare + ", " + std::to_string(size) + ", " + CppSourceSiteArgs(span) + ")";
}

std::string ArrayDecl(const std::string& ctype, const std::string& name, int64_t size, const std::string& init) {
  return "[[maybe_unused]] " + ctype + " " + name + "[" + std::to_string(size) + "]" + init + ";";
}

namespace {

// Does printed C++ `text` have, outside parentheses, an operator that binds looser than `<` (a
// conditional, a comparison, a bitwise or logical operator, an assignment)? The printers write
// binary operators between spaces and template arguments without (`static_cast<int64_t>(n)`).
bool BindsLooserThanLess(const std::string& text) {
  static const char* const kLoose[] = {" ? ", " < ", " > ", " <= ", " >= ", " == ", " != ", " & ", " ^ ",
                                       " | ", " && ", " || ", " = "};
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth != 0 || text[i] != ' ') continue;
    for (const char* op : kLoose) {
      if (text.compare(i, std::char_traits<char>::length(op), op) == 0) return true;
    }
  }
  return false;
}

}  // namespace

std::string ForHeader(const std::string& var, const std::string& start, const std::string& stop,
                      const std::string& step, bool descending) {
  // The bound is a comparison's operand: `i < (a > b ? a : b)` (a conditional or a comparison
  // printed bare would bind to `i < a` first; found by the pl.at fuzzer, a chunk loop's max()).
  const std::string bound = BindsLooserThanLess(stop) ? "(" + stop + ")" : stop;
  return "for (int64_t " + var + " = " + start + "; " + var + (descending ? " > " : " < ") + bound + "; " + var +
         " += " + step + ")";
}

std::string LoopStop(const ir::ExprPtr& stop, const std::string& printed) {
  auto* s = stop && stop->type ? stop->type->as<ir::ScalarType>() : nullptr;
  return s && s->dtype == ir::DataType::UINT64 ? "static_cast<int64_t>(" + printed + ")" : printed;
}

void RangeLoopPrologue(CppWriter& w, const RangeLoopNames& n, const std::string& start, const std::string& step,
                       const std::string& stop, const ir::Span& span) {
  w.line("const int64_t " + n.start + " = " + start + ";");
  w.line("const int64_t " + n.step + " = " + step + ";");
  w.line("const uint64_t " + n.count + " = pto2_range_count(" + n.start + ", " + stop + ", " + n.step + ", " +
         CppSourceSiteArgs(span) + ");");
}

std::string RangeLoopHeader(const RangeLoopNames& n) {
  return "for (uint64_t " + n.k + " = 0; " + n.k + " < " + n.count + "; ++" + n.k + ")";
}

std::string RangeLoopVarLine(const RangeLoopNames& n) {
  return "const int64_t " + n.var + " = (int64_t)((uint64_t)" + n.start + " + " + n.k + " * (uint64_t)" + n.step + ");";
}

}  // namespace pypto::codegen::common
