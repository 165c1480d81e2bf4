// Support for the IR printer (printer.cpp): name tables, literal spellings, op spellings and
// Python operator precedence. Internal to src/ir.
//
//   NameTable names;  names.define(var) -> "x", then "x_1" for another Var hinted "x"
//   format_float(0.1) -> "0.1";  op_spelling("tile.add") -> "pl.add"
#pragma once
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "pypto/ir/visitor.h"

namespace pypto::ir::printer_support {

// Python keywords and the names the printed text itself refers to (pl, self, tuple, min, ...).
const std::set<std::string>& reserved_names();
// A valid Python identifier from a name hint ("a.b" -> "a_b", "1x" -> "v1x", "" -> "v").
std::string sanitize(const std::string& raw);

// Collects the name hints of every Var of a function (so uniquified names avoid them) and
// counts Var occurrences (definitions and uses) for the tuple-unpacking rule.
struct VarCensus : IRVisitor {
  std::set<std::string> names;
  std::unordered_map<const Var*, int> count;
  void visit_(const Var* op) override;
  void visit_(const IterArg* op) override;
};

// Printed names of Vars: the first Var hinted `x` gets `x`, the next ones `x_1`, `x_2`, ...
// skipping taken names, the hints of other Vars (`avoid`) and reserved names.
class NameTable {
 public:
  void avoid(const std::set<std::string>& names) { hints_.insert(names.begin(), names.end()); }
  // The printed name of `v`, allocating one on first sight.
  const std::string& name(const Var* v);
  const std::string& define(const Var* v) { return name(v); }
  // A name for no Var (a placeholder target): `base`, or `base_<k>` if taken.
  std::string fresh(const std::string& base);

 private:
  std::unordered_map<const Var*, std::string> names_;
  std::set<std::string> taken_;
  std::set<std::string> hints_;
};

// Shortest text that reads back as `v`, laid out like Python's repr(float).
std::string format_float(double v);
// A double-quoted Python string literal.
std::string quote(const std::string& s);

// DSL spelling of a registered op ("tile.add" -> "pl.add", "tensor.create" -> "pl.create_tensor").
std::string op_spelling(const std::string& op);
// Attrs the DSL spells positionally, after the expr args, in this order.
const std::vector<std::string>& positional_attrs(const std::string& op);

// Python operator precedence (higher binds tighter).
// Python's operator precedence, lowest first.
enum Prec : int {
  kOr = 1, kAnd, kNot, kCmp, kBitOr, kBitXor, kBitAnd, kShift, kAdd, kMul, kUnary, kAtom = kUnary + 2
};
int binary_prec(BinaryOp op);
bool is_op_call(const ExprPtr& e, const char* name);

}  // namespace pypto::ir::printer_support
