// Support for the IR printer: names, literals, op spellings, precedence (printer_support.h).
#include "printer_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>

#include "pypto/ir/printer.h"

namespace pypto::ir::printer_support {

namespace {

// Python's hard keywords: `None` / `True` / `False` are constants there, the others syntax.
const std::set<std::string, std::less<>>& python_keywords() {
  static const std::set<std::string, std::less<>> kKeywords = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def",
      "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is",
      "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield"};
  return kKeywords;
}

}  // namespace

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> kReserved = [] {
    std::set<std::string> r(python_keywords().begin(), python_keywords().end());   // would break parsing
    for (const char* n : {"pl", "self", "tuple", "min", "max", "float"}) r.insert(n);   // the printed text's own names
    return r;
  }();
  return kReserved;
}

std::string sanitize(const std::string& raw) {
  std::string s;
  for (char c : raw) {
    // Bytes of multi-byte UTF-8 characters pass: the names come from Python identifiers, which
    // may be non-ASCII (`class Prög`), and the printed text must parse back to the same names.
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
              (static_cast<unsigned char>(c) & 0x80) != 0;
    s += ok ? c : '_';
  }
  if (s.empty()) s = "v";
  if (s[0] >= '0' && s[0] <= '9') s = "v" + s;
  return s;
}

void VarCensus::visit_(const Var* op) {
  names.insert(op->name);
  ++count[op];
  IRVisitor::visit_(op);
}

void VarCensus::visit_(const IterArg* op) {
  names.insert(op->name);
  ++count[op];
  IRVisitor::visit_(op);
}

const std::string& NameTable::name(const Var* v) {
  auto it = names_.find(v);
  if (it != names_.end()) return it->second;
  std::string base = sanitize(v->name);
  if (reserved_names().count(base)) base += "_";
  std::string chosen = base;
  if (taken_.count(chosen)) {
    for (int k = 1;; ++k) {
      chosen = base + "_" + std::to_string(k);
      if (!taken_.count(chosen) && !hints_.count(chosen)) break;
    }
  }
  taken_.insert(chosen);
  return names_.emplace(v, chosen).first->second;
}

std::string NameTable::fresh(const std::string& base) {
  std::string chosen = base;
  for (int k = 1; taken_.count(chosen) || hints_.count(chosen); ++k) chosen = base + "_" + std::to_string(k);
  taken_.insert(chosen);
  return chosen;
}

// Shortest text that reads back as `v`, laid out like Python's repr(float): positional
// between 1e-4 and 1e16 ("100.0", "0.001"), else exponent form ("1e-30", "3e+20").
std::string format_float(double v) {
  if (std::isnan(v)) return "float(\"nan\")";
  if (std::isinf(v)) return v > 0 ? "float(\"inf\")" : "-float(\"inf\")";
  char buf[64];
  int digits = 17;
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
    if (std::strtod(buf, nullptr) == v) {
      digits = p;
      break;
    }
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  std::string sci = buf;
  int exp = std::atoi(sci.c_str() + sci.find('e') + 1);
  if (exp >= -4 && exp < 16) {
    int decimals = std::max(digits - 1 - exp, 0);
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    std::string s = buf;
    if (s.find('.') == std::string::npos) s += ".0";
    return s;
  }
  return sci;
}

std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') { out += "\\n"; continue; }
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {   // other control characters: \xNN
      static const char* hex = "0123456789abcdef";
      out += std::string("\\x") + hex[(c >> 4) & 0xf] + hex[c & 0xf];
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// DSL spelling of a registered op ("tile.add" -> "pl.add").
std::string op_spelling(const std::string& op) {
  if (op == "tensor.create") return "pl.create_tensor";
  if (op == "tile.get_block_idx" || op == "tile.get_block_num") return "pl." + op;
  auto dot = op.find('.');
  if (dot == std::string::npos) return "pl." + op;
  std::string ns = op.substr(0, dot), name = op.substr(dot + 1);
  if (ns == "tile") {
    // Tile ops without a top-level pl.<name> that means them (pl.read is tensor.read) print
    // through the namespace, so the text re-parses to the same op; Python keywords get a '_'.
    static const std::set<std::string> kNamespaced = {
        "alloc", "arange", "batch_matmul_acc", "ci", "cos", "create", "extract", "fillpad_inplace", "gather", "gather_compare",
        "gather_mask", "gather_row", "get_subblock_idx", "mrgsort_format1", "mrgsort_format2", "read", "scatter",
        "scatter_mask", "scatter_update", "sin", "sort32", "tpop_from_aic", "tpop_from_aiv", "tpush_to_aic",
        "tpush_to_aiv", "transpose_view"};
    if (name == "and" || name == "or" || name == "not") return "pl.tile." + name + "_";
    return (kNamespaced.count(name) ? "pl.tile." : "pl.") + name;
  }
  return "pl." + op;   // pl.tensor.slice, pl.system.task_dummy, pl.array.create, ...
}

// Attrs the DSL spells positionally, after the expr args, in this order.
const std::vector<std::string>& positional_attrs(const std::string& op) {
  static const std::map<std::string, std::vector<std::string>> kTable = {
      {"tile.cast", {"dtype"}},
      {"array.create", {"size", "dtype"}},
  };
  static const std::vector<std::string> kNone;
  auto it = kTable.find(op);
  return it == kTable.end() ? kNone : it->second;
}

int binary_prec(BinaryOp op) {
  switch (op) {
    case BinaryOp::Or: return kOr;
    case BinaryOp::And: return kAnd;
    case BinaryOp::Eq: case BinaryOp::Ne: case BinaryOp::Lt: case BinaryOp::Le: case BinaryOp::Gt: case BinaryOp::Ge:
      return kCmp;
    case BinaryOp::Add: case BinaryOp::Sub: return kAdd;
    case BinaryOp::Mul: case BinaryOp::Div: case BinaryOp::FloorDiv: case BinaryOp::Mod: return kMul;
    case BinaryOp::Min: case BinaryOp::Max: return kAtom;   // printed as min(a, b) / max(a, b)
    case BinaryOp::BitOr: return kBitOr;
    case BinaryOp::BitXor: return kBitXor;
    case BinaryOp::BitAnd: return kBitAnd;
    case BinaryOp::Shl: case BinaryOp::Shr: return kShift;
  }
  return kAtom;
}

bool is_op_call(const ExprPtr& e, const char* name) {
  auto* c = e ? e->as<Call>() : nullptr;
  return c && c->is_op && c->callee == name;
}

}  // namespace pypto::ir::printer_support

namespace pypto::ir {

bool IsPythonKeyword(std::string_view name) { return printer_support::python_keywords().count(name) > 0; }

}  // namespace pypto::ir
