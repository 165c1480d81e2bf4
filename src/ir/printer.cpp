// The IR printer: IR -> DSL text (docs/dsl.md) that `pl.parse_program` parses back to a
// structurally equal IR (ARCHITECTURE.md: "the printer round-trips").
//
// Why it looks the way it does:
//   * Names: identity is the Var pointer, names are only hints, so each function gets its own
//     name table: the first Var called `x` prints as `x`, other Vars called `x` as `x_1`,
//     `x_2`, ... (skipping names other Vars of the function use and Python keywords). The
//     printed text therefore never reassigns a name, and the parser's automatic SSA threading
//     never kicks in: loops and branches are printed in the explicit iter_args / pl.yield_ form.
//   * Tuple unpacking: a tuple-typed var whose only uses are the statements right after it,
//     `v_i = tup[i]` for i = 0..n-1 in order, prints as `v_0, ..., v_n-1 = <value>`.
//   * Ops print with their DSL spelling (tile.add -> pl.add, tensor.create -> pl.create_tensor,
//     tensor.read -> t[i, j], ...); op attrs print as keywords except the few the DSL spells
//     positionally (pl.cast(t, pl.FP16), pl.array.create(4, pl.TASK_ID)).
//   * Pass-produced argument directions (DeriveCallDirections) on calls to program functions
//     and on submits print as the keyword `arg_directions=[pl.In, pl.Scalar, pl.Out]`, which
//     the parser reads back exactly; frontend-only directions (NoDep) stay `pl.no_dep(x)`.
//     Function attrs print as `attrs={...}` in @pl.function, call attrs on function calls as
//     `attrs={...}` on the call. Directions on op calls (no pass sets them) are a comment.
//
//   python_print(program)
//   // import pypto.language as pl
//   //
//   // @pl.program
//   // class VectorAdd:
//   //     @pl.function(type=pl.FunctionType.InCore)
//   //     def kernel_add(self, a: pl.Tensor[[16, 16], pl.FP32], ...) -> pl.Tensor[[16, 16], pl.FP32]:
//   //         ...
#include "pypto/ir/printer.h"

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "printer_support.h"
#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"

namespace pypto::ir {
namespace {

using namespace printer_support;

// ---------------------------------------------------------------------------------------------
// The printer

class Printer {
 public:
  std::string program(const Program& p);
  std::string function(const Function& f, int indent);
  std::string stmt(const StmtPtr& s) {
    if (s) {
      VarCensus census;
      census.visit_stmt(s);
      census_ = census.count;
      names_.avoid(census.names);
    }
    print_body(s, 0);
    return out_.str();
  }
  std::string expr(const ExprPtr& e) { return print_expr(e, 0); }
  std::string type(const TypePtr& t) { return print_type(t); }

 private:
  // -- types
  std::string print_type(const TypePtr& t);
  std::string print_shape(const std::vector<ExprPtr>& shape);
  static std::string dtype(DataType d) { return std::string("pl.") + to_string(d); }

  // -- exprs
  std::string print_expr(const ExprPtr& e, int ctx_prec);
  std::string print_call(const Call& c);
  std::string print_submit(const Submit& s);
  std::string print_args(const std::vector<ExprPtr>& args, const std::vector<ArgDirection>& dirs);
  std::string print_func_args(const std::vector<ExprPtr>& args, const std::vector<ArgDirection>& dirs);
  std::string print_list(const std::vector<ExprPtr>& v);
  std::string print_subscript_base(const ExprPtr& e) { return print_expr(e, kAtom); }
  std::string print_index_list(const ExprPtr& e);
  std::string print_predicate(const ExprPtr& e);
  std::string print_attr_value(const std::string& key, const AttrValue& v);
  std::string print_attr_dict(const std::map<std::string, AttrValue>& attrs);
  std::string var_name(const Var* v) { return names_.name(v); }
  std::string print_task_ids(const std::vector<TaskIdInfo>& ids);
  void note_directions(const std::vector<ArgDirection>& dirs);

  // -- stmts
  void print_body(const StmtPtr& s, int indent);
  void print_stmts(const std::vector<StmtPtr>& stmts, int indent);
  size_t print_stmt(const std::vector<StmtPtr>& stmts, size_t i, int indent);   // returns #consumed
  void print_for(const ForStmt& f, int indent);
  void print_if(const IfStmt& s, int indent, bool is_elif);
  void print_scope(const ScopeStmt& s, int indent);
  void print_yield(const YieldStmt& y, int indent);
  void line(int indent, const std::string& text);

  std::ostringstream out_;
  NameTable names_;
  std::unordered_map<const Var*, int> census_;
  std::vector<std::string> comments_;                 // trailing comments of the current line
  std::vector<const std::vector<VarPtr>*> yield_targets_;   // return vars of the enclosing for/if
};

void Printer::line(int indent, const std::string& text) {
  out_ << std::string(static_cast<size_t>(indent) * 4, ' ') << text;
  if (!comments_.empty()) {
    out_ << "  #";
    for (size_t i = 0; i < comments_.size(); ++i) out_ << (i ? ";" : "") << " " << comments_[i];
    comments_.clear();
  }
  out_ << "\n";
}

// ---- types ----

std::string Printer::print_shape(const std::vector<ExprPtr>& shape) { return print_list(shape); }

std::string Printer::print_type(const TypePtr& t) {
  PYPTO_CHECK(t, "python_print: null type");
  switch (t->kind) {
    case TypeKind::Scalar:
      return "pl.Scalar[" + dtype(t->as<ScalarType>()->dtype) + "]";
    case TypeKind::Tensor: {
      auto* tt = t->as<TensorType>();
      std::string s = "pl.Tensor[" + print_shape(tt->shape) + ", " + dtype(tt->dtype);
      if (tt->layout != Layout::ND) s += std::string(", pl.Layout.") + to_string(tt->layout);
      return s + "]";
    }
    case TypeKind::Tile: {
      auto* tt = t->as<TileType>();
      std::string s = "pl.Tile[" + print_shape(tt->shape) + ", " + dtype(tt->dtype);
      if (tt->memory != MemorySpace::Vec) s += std::string(", pl.MemorySpace.") + to_string(tt->memory);
      if (tt->has_valid_shape()) s += ", pl.TileView(valid_shape=" + print_shape(tt->valid_shape) + ")";
      return s + "]";
    }
    case TypeKind::Tuple: {
      auto* tt = t->as<TupleType>();
      std::string s = "tuple[";
      for (size_t i = 0; i < tt->elements.size(); ++i) s += (i ? ", " : "") + print_type(tt->elements[i]);
      return s + "]";
    }
    case TypeKind::Array: {
      auto* at = t->as<ArrayType>();
      return "pl.Array[" + std::to_string(at->size) + ", " + dtype(at->dtype) + "]";
    }
  }
  PYPTO_CHECK(false, "python_print: unknown type kind");
  return "";
}

// ---- exprs ----

std::string Printer::print_list(const std::vector<ExprPtr>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + print_expr(v[i], 0);
  return s + "]";
}

// `t[i, j]` index part from a MakeTuple (or a single index expr).
std::string Printer::print_index_list(const ExprPtr& e) {
  if (auto* mt = e->as<MakeTuple>()) {
    if (mt->elements.empty()) return "()";
    std::string s;
    for (size_t i = 0; i < mt->elements.size(); ++i) s += (i ? ", " : "") + print_expr(mt->elements[i], 0);
    return s;
  }
  return print_expr(e, 0);
}

void Printer::note_directions(const std::vector<ArgDirection>& dirs) {
  bool informative = false;
  for (auto d : dirs) informative |= (d != ArgDirection::Unset && d != ArgDirection::NoDep);
  if (!informative) return;
  std::string s = "dirs: ";
  for (size_t i = 0; i < dirs.size(); ++i) s += (i ? ", " : "") + std::string(to_string(dirs[i]));
  comments_.push_back(s);
}

// Directions carry information beyond what `pl.no_dep(x)` says (DeriveCallDirections ran).
// `[0, 2]`: the int lists of typed pass results (param_slots=, inplace_carries=, ...).
static std::string print_int_list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

static bool derived_directions(const std::vector<ArgDirection>& dirs) {
  for (auto d : dirs) {
    if (d != ArgDirection::Unset && d != ArgDirection::NoDep) return true;
  }
  return false;
}

// `[pl.In, pl.Scalar, pl.Out]`: the spelling of the `arg_directions=` keyword.
static std::string direction_list(const std::vector<ArgDirection>& dirs) {
  std::string s = "[";
  for (size_t i = 0; i < dirs.size(); ++i) s += (i ? ", pl." : "pl.") + std::string(to_string(dirs[i]));
  return s + "]";
}

std::string Printer::print_args(const std::vector<ExprPtr>& args, const std::vector<ArgDirection>& dirs) {
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i) s += ", ";
    std::string a = print_expr(args[i], 0);
    if (i < dirs.size() && dirs[i] == ArgDirection::NoDep) a = "pl.no_dep(" + a + ")";
    s += a;
  }
  note_directions(dirs);
  return s;
}

// Arguments of a call to a program function (or a submit): derived directions print as the
// `arg_directions=[...]` keyword, which the parser reads back exactly; the list is then the
// whole truth and the arguments print plain (a NoDep slot is `pl.NoDep` in the list).
std::string Printer::print_func_args(const std::vector<ExprPtr>& args, const std::vector<ArgDirection>& dirs) {
  if (!derived_directions(dirs)) return print_args(args, dirs);
  std::string s;
  for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + print_expr(args[i], 0);
  return s + (args.empty() ? "" : ", ") + "arg_directions=" + direction_list(dirs);
}

// `{"key": value, ...}`: the `attrs=` keyword of pl.range, @pl.function and function calls.
std::string Printer::print_attr_dict(const std::map<std::string, AttrValue>& attrs) {
  std::string s = "{";
  bool first = true;
  for (auto& [k, v] : attrs) {
    s += (first ? "" : ", ") + quote(k) + ": " + print_attr_value(k, v);
    first = false;
  }
  return s + "}";
}

std::string Printer::print_attr_value(const std::string& key, const AttrValue& v) {
  if (auto* b = std::get_if<bool>(&v)) return *b ? "True" : "False";
  if (auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (auto* d = std::get_if<double>(&v)) return format_float(*d);
  if (auto* s = std::get_if<std::string>(&v)) {
    if (key == "dtype") return "pl." + *s;
    if (key == "target_memory" || key == "memory") return "pl.MemorySpace." + *s;
    if (key == "level") return "pl.Level." + *s;
    if (key == "layout") return "pl.Layout." + *s;
    return quote(*s);
  }
  if (auto* e = std::get_if<ExprPtr>(&v)) {
    if (!*e) return "None";
    if (key == "predicate") return print_predicate(*e);
    return print_expr(*e, 0);
  }
  if (auto* l = std::get_if<std::vector<ExprPtr>>(&v)) return print_list(*l);
  return "None";
}

// `predicate=(rc[0, 0] > 0)`: the IR form is Cmp(Cast(tensor.read(...), INT64), ConstInt)
// in either operand order; the Cast is implicit in the DSL.
std::string Printer::print_predicate(const ExprPtr& e) {
  auto strip = [&](const ExprPtr& x) -> std::string {
    if (auto* c = x->as<Cast>()) {
      if (is_op_call(c->value, "tensor.read")) return print_expr(c->value, kCmp + 1);
    }
    return print_expr(x, kCmp + 1);
  };
  if (auto* b = e->as<BinaryExpr>()) {
    if (binary_prec(b->op) == kCmp) return "(" + strip(b->a) + " " + to_string(b->op) + " " + strip(b->b) + ")";
  }
  return "(" + print_expr(e, 0) + ")";
}

std::string Printer::print_call(const Call& c) {
  if (!c.is_op) {
    std::string args = print_func_args(c.args, c.arg_directions);
    if (!c.attrs.empty() || !c.dump_vars.empty()) {
      // dump_vars prints inside attrs (reference spelling, anchor §6), after the Call's own attrs.
      std::string d = c.attrs.empty() ? "{}" : print_attr_dict(c.attrs);
      if (!c.dump_vars.empty()) {
        d = d.substr(0, d.size() - 1) + (c.attrs.empty() ? "" : ", ") + "\"dump_vars\": " + print_list(c.dump_vars) + "}";
      }
      args += (args.empty() ? "" : ", ") + std::string("attrs=") + d;
    }
    if (!c.compiler_manual_dep_edges.empty()) {
      args += (args.empty() ? "" : ", ") + std::string("compiler_manual_dep_edges=") + print_list(c.compiler_manual_dep_edges);
    }
    return "self." + c.callee + "(" + args + ")";
  }
  // Subscript forms.
  if ((c.callee == "tensor.read" || c.callee == "array.get_element") && c.args.size() == 2 && c.attrs.empty()) {
    return print_subscript_base(c.args[0]) + "[" + print_index_list(c.args[1]) + "]";
  }
  if (c.callee == "system.task_dummy" && c.args.empty()) {
    // pl.system.task_dummy(deps=[...]): the parser stores deps as Call::manual_dep_edges and
    // marks the call "dummy_task"=True.
    std::string s = "pl.system.task_dummy(";
    for (auto& [k, v] : c.attrs) {
      if (k == "dummy_task" && std::get_if<bool>(&v) && std::get<bool>(v)) continue;
      s += k + "=" + print_attr_value(k, v) + ", ";
    }
    return s + "deps=" + print_list(c.manual_dep_edges) + ")";
  }
  if (c.callee == "tile.full" && c.args.size() == 2 && c.attrs.count("dtype") &&
      c.attrs.size() == 1 + c.attrs.count("target_memory")) {
    // pl.tile.full(shape, dtype, value) (pl.full is the tensor fill, reference_ops.md §1.1), and the
    // target_memory an annotation set (anchor_features §14)
    std::string s = "pl.tile.full(" + print_expr(c.args[0], 0) + ", " + print_attr_value("dtype", c.attrs.at("dtype")) +
                    ", " + print_expr(c.args[1], 0);
    if (c.attrs.count("target_memory"))
      s += ", target_memory=" + print_attr_value("target_memory", c.attrs.at("target_memory"));
    return s + ")";
  }
  if (c.callee == "system.task_ref") {
    // The typed Call::task_ref prints as the op's keywords (make_op takes them back).
    std::string s = "pl.system.task_ref(" + print_args(c.args, c.arg_directions) + (c.args.empty() ? "" : ", ");
    if (c.task_ref.every_iteration) s += "every_iteration=True, ";
    if (c.task_ref.slot >= 0) s += "slot=" + std::to_string(c.task_ref.slot) + ", ";
    return s + "task=" + print_attr_value("task", AttrValue(c.task_ref.task)) + ")";
  }
  std::string s = op_spelling(c.callee) + "(" + print_args(c.args, c.arg_directions);
  bool first = c.args.empty();
  if (c.peer_base != Call::kNoPeerBase) {   // ResolvePeerBufferBases: the op's first keyword, as the DSL spells it
    s += (first ? "" : ", ") + std::string("base=") + std::to_string(c.peer_base);
    first = false;
  }
  const auto& pos = positional_attrs(c.callee);
  std::set<std::string> done;
  for (auto& key : pos) {
    auto it = c.attrs.find(key);
    if (it == c.attrs.end()) break;
    s += (first ? "" : ", ") + print_attr_value(key, it->second);
    first = false;
    done.insert(key);
  }
  // pl.create_tensor(..., manual_dep=..., init_value=...): init_value last, as the reference prints it.
  if (c.callee == "tensor.create") done.insert("init_value");
  for (auto& [k, v] : c.attrs) {
    if (done.count(k)) continue;
    s += (first ? "" : ", ") + k + "=" + print_attr_value(k, v);
    first = false;
  }
  if (auto it = c.attrs.find("init_value"); c.callee == "tensor.create" && it != c.attrs.end()) {
    s += (first ? "" : ", ") + std::string("init_value=") + print_attr_value("init_value", it->second);
  }
  if (c.shares_source_tile) s += (first ? "" : ", ") + std::string("shares_source_tile=True");   // KernelShareTileMoves
  if (c.reads_in_place) s += (first ? "" : ", ") + std::string("reads_in_place=True");   // KernelInPlaceMatmulLoads
  if (c.cpu_base >= 0) s += (first ? "" : ", ") + std::string("cpu_base=") + std::to_string(c.cpu_base);   // ResolvePeerBufferBases
  return s + ")";
}

std::string Printer::print_submit(const Submit& sb) {
  std::string s = sb.core_num ? "pl.spmd_submit(self." : "pl.submit(self.";
  s += sb.callee;
  if (!sb.args.empty() || derived_directions(sb.arg_directions)) {
    s += ", " + print_func_args(sb.args, sb.arg_directions);
  }
  if (sb.core_num) s += ", core_num=" + print_expr(sb.core_num, 0);
  if (sb.sync_start) s += ", sync_start=True";
  if (!sb.deps.empty()) s += ", deps=" + print_list(sb.deps);
  if (!sb.compiler_manual_dep_edges.empty()) s += ", compiler_manual_dep_edges=" + print_list(sb.compiler_manual_dep_edges);
  if (sb.allow_early_resolve) s += ", allow_early_resolve=True";
  if (sb.timing_slot >= 0) s += ", timing_slot=" + std::to_string(sb.timing_slot);
  if (sb.predicate) s += ", predicate=" + print_predicate(sb.predicate);
  if (!sb.dump_vars.empty()) s += ", dumps=" + print_list(sb.dump_vars);
  return s + ")";
}

std::string Printer::print_expr(const ExprPtr& e, int ctx) {
  PYPTO_CHECK(e, "python_print: null expr");
  auto paren = [&](int prec, std::string s) { return prec < ctx ? "(" + s + ")" : s; };
  switch (e->kind) {
    case NodeKind::Var:
    case NodeKind::IterArg:
      return var_name(static_cast<const Var*>(e.get()));
    case NodeKind::ConstInt: {
      int64_t v = e->as<ConstInt>()->value;
      return v < 0 ? paren(kUnary, std::to_string(v)) : std::to_string(v);
    }
    case NodeKind::ConstFloat: {
      std::string s = format_float(e->as<ConstFloat>()->value);
      return s[0] == '-' ? paren(kUnary, s) : s;
    }
    case NodeKind::ConstBool:
      return e->as<ConstBool>()->value ? "True" : "False";
    case NodeKind::BinaryExpr: {
      auto* b = e->as<BinaryExpr>();
      if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
        return std::string(to_string(b->op)) + "(" + print_expr(b->a, 0) + ", " + print_expr(b->b, 0) + ")";
      }
      int p = binary_prec(b->op);
      // Left-associative arithmetic: the left operand may share the precedence, the right
      // one may not. Comparisons chain in Python and `and`/`or` flatten, so both operands
      // of those get parentheses when they share the precedence.
      bool assoc = p == kAdd || p == kMul || (p >= kBitOr && p <= kShift);
      std::string l = print_expr(b->a, assoc ? p : p + 1);
      std::string r = print_expr(b->b, p + 1);
      return paren(p, l + " " + to_string(b->op) + " " + r);
    }
    case NodeKind::UnaryExpr: {
      auto* u = e->as<UnaryExpr>();
      if (u->op == UnaryOp::Not) return paren(kNot, "not " + print_expr(u->a, kNot));
      return paren(kUnary, std::string(to_string(u->op)) + print_expr(u->a, kUnary));
    }
    case NodeKind::Cast: {
      auto* c = e->as<Cast>();
      return "pl.cast(" + print_expr(c->value, 0) + ", " + dtype(c->type->as<ScalarType>() ? c->type->as<ScalarType>()->dtype : DataType::INDEX) + ")";
    }
    case NodeKind::Call:
      return print_call(*e->as<Call>());
    case NodeKind::Submit:
      return print_submit(*e->as<Submit>());
    case NodeKind::MakeTuple:
      return print_list(e->as<MakeTuple>()->elements);
    case NodeKind::TupleGetItem: {
      auto* g = e->as<TupleGetItem>();
      return print_subscript_base(g->tuple) + "[" + std::to_string(g->index) + "]";
    }
    // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "python_print: no printer for expr kind " << to_string(e->kind));
  return "";
}

// ---- stmts ----

void Printer::print_body(const StmtPtr& s, int indent) {
  std::vector<StmtPtr> stmts = flatten_stmts(s);
  size_t before = static_cast<size_t>(out_.tellp());
  print_stmts(stmts, indent);
  if (static_cast<size_t>(out_.tellp()) == before) line(indent, "pass");
}

void Printer::print_stmts(const std::vector<StmtPtr>& stmts, int indent) {
  for (size_t i = 0; i < stmts.size();) i += print_stmt(stmts, i, indent);
}

size_t Printer::print_stmt(const std::vector<StmtPtr>& stmts, size_t i, int indent) {
  const StmtPtr& s = stmts[i];
  switch (s->kind) {
    case NodeKind::AssignStmt: {
      auto* a = s->as<AssignStmt>();
      const Var* v = a->var.get();
      // Tuple unpacking: `a, b = value` for `tup = value; a = tup[0]; b = tup[1]`. Passes may
      // read the elements in another order or skip some (outlined submits): those still print
      // as one unpacking, with a fresh `_` name for each element nobody reads (pl.submit must
      // be unpacked to parse).
      if (auto* tt = v->type->as<TupleType>()) {
        size_t n = tt->elements.size();
        std::vector<const Var*> targets(n, nullptr);
        size_t m = 0;
        bool in_order = true;
        int64_t last = -1;
        while (i + 1 + m < stmts.size()) {
          auto* ak = stmts[i + 1 + m]->as<AssignStmt>();
          auto* g = ak ? ak->value->as<TupleGetItem>() : nullptr;
          if (!g || g->tuple.get() != v || g->index < 0 || static_cast<size_t>(g->index) >= n || targets[g->index]) break;
          targets[g->index] = ak->var.get();
          in_order &= g->index > last;
          last = g->index;
          ++m;
        }
        bool only_uses = census_.count(v) && census_[v] == static_cast<int>(m) + 1;
        // Unpacking reads every element, in index order (a placeholder `_` target is a read
        // too). Pass output that reads in another order (an outlined `with pl.at(...) as tid`
        // reads the TaskId first) or skips elements prints as `t = ...` and `x = t[i]`
        // instead, which parses back exactly. A submit can only be bound to one name when it
        // carries arg_directions= (pass output after DeriveCallDirections); before that pass
        // it still unpacks, with `_` for unread elements, and the read shape is lost.
        auto* sub = a->value->as<Submit>();
        bool keep_order = (!in_order || m != n) && (!sub || derived_directions(sub->arg_directions));
        if (n > 0 && only_uses && !keep_order && (m > 0 || sub)) {
          std::string value = print_expr(a->value, 0);
          std::string lhs;
          for (size_t k = 0; k < n; ++k) lhs += (k ? ", " : "") + (targets[k] ? names_.define(targets[k]) : names_.fresh("_"));
          if (n == 1) lhs = "(" + lhs + ",)";
          line(indent, lhs + " = " + value);
          return m + 1;
        }
      }
      std::string value = print_expr(a->value, 0);
      std::string target = names_.define(v);
      if (v->type->is<TensorType>() || v->type->is<TileType>()) target += ": " + print_type(v->type);
      line(indent, target + " = " + value);
      return 1;
    }
    case NodeKind::EvalStmt: {
      const ExprPtr& e = s->as<EvalStmt>()->expr;
      if (auto* c = e->as<Call>(); c && c->is_op && c->callee == "system.assert") {   // Python's own statement
        auto it = c->attrs.find("message");
        auto* message = it != c->attrs.end() ? std::get_if<std::string>(&it->second) : nullptr;
        line(indent, "assert " + print_expr(c->args.at(0), 0) + (message && !message->empty() ? ", " + quote(*message) : ""));
        return 1;
      }
      line(indent, print_expr(e, 0));
      return 1;
    }
    case NodeKind::SeqStmts:
      print_stmts(s->as<SeqStmts>()->stmts, indent);
      return 1;
    case NodeKind::ForStmt:
      print_for(*s->as<ForStmt>(), indent);
      return 1;
    case NodeKind::IfStmt:
      print_if(*s->as<IfStmt>(), indent, false);
      return 1;
    case NodeKind::YieldStmt:
      print_yield(*s->as<YieldStmt>(), indent);
      return 1;
    case NodeKind::ReturnStmt: {
      auto* r = s->as<ReturnStmt>();
      std::string vals;
      for (size_t k = 0; k < r->values.size(); ++k) vals += (k ? ", " : "") + print_expr(r->values[k], 0);
      line(indent, vals.empty() ? "return" : "return " + vals);
      return 1;
    }
    case NodeKind::ScopeStmt:
      print_scope(*s->as<ScopeStmt>(), indent);
      return 1;
    case NodeKind::RuntimeScopeStmt: {
      // MaterializeRuntimeScopes wraps whole loop/branch bodies, yield included: a yield
      // inside still targets the enclosing for/if (the parser accepts that shape).
      auto* r = s->as<RuntimeScopeStmt>();
      const std::string open = r->mode == RuntimeScopeMode::Manual ? "with pl.manual_scope(" : "with pl.scope(";
      // carried_task_ids= / exit_values= name body Vars: spliced in once the body has given them their names.
      const size_t carries_at = static_cast<size_t>(out_.tellp()) + static_cast<size_t>(indent) * 4 + open.size();
      line(indent, open + "):");
      print_body(r->body, indent + 1);
      if (!r->carried_task_ids.empty() || !r->exit_values.empty()) {
        std::string text;
        if (!r->carried_task_ids.empty()) {
          text = "carried_task_ids={";
          for (size_t k = 0; k < r->carried_task_ids.size(); ++k) {
            const ScopeTaskIdCarry& c = r->carried_task_ids[k];
            text += (k ? ", " : "") + quote(var_name(c.var.get())) + ": " + std::to_string(c.slots);
          }
          text += "}";
        }
        if (!r->exit_values.empty()) {
          text += std::string(text.empty() ? "" : ", ") + "exit_values=[";
          for (size_t k = 0; k < r->exit_values.size(); ++k)
            text += (k ? ", " : "") + quote(var_name(r->exit_values[k].get()));
          text += "]";
        }
        std::string all = out_.str();
        all.insert(carries_at, text);
        out_.str(all);
        out_.seekp(0, std::ios::end);
      }
      return 1;
    }
    // The other node category (no `default:`: -Wswitch flags an unhandled new kind).
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
      break;
  }
  PYPTO_CHECK(false, "python_print: no printer for stmt kind " << to_string(s->kind));
  return 1;
}

void Printer::print_yield(const YieldStmt& y, int indent) {
  const std::vector<VarPtr>* targets = yield_targets_.empty() ? nullptr : yield_targets_.back();
  if (y.values.empty() && (!targets || targets->empty())) return;   // loops without carries
  std::string vals;
  for (size_t k = 0; k < y.values.size(); ++k) vals += (k ? ", " : "") + print_expr(y.values[k], 0);
  std::string call = "pl.yield_(" + vals + ")";
  if (!targets || targets->empty()) {
    line(indent, call);
    return;
  }
  std::string lhs;
  for (size_t k = 0; k < targets->size(); ++k) lhs += (k ? ", " : "") + names_.define((*targets)[k].get());
  line(indent, lhs + " = " + call);
}

void Printer::print_for(const ForStmt& f, int indent) {
  std::string range = f.for_kind == ForKind::Parallel ? "pl.parallel("
                      : f.for_kind == ForKind::Unroll ? "pl.unroll("
                                                      : "pl.range(";
  range += print_expr(f.start, 0) + ", " + print_expr(f.stop, 0) + ", " + print_expr(f.step, 0);
  std::string inits;
  for (size_t k = 0; k < f.iter_args.size(); ++k) inits += (k ? ", " : "") + print_expr(f.iter_args[k]->init, 0);
  // pl.unroll refuses init_values= (spec anchor_features §12): its carries, implicit in the source,
  // print as implicit_carries= so the parsed (pre-UnrollLoops) IR re-parses.
  const char* init_kw = f.for_kind == ForKind::Unroll ? ", implicit_carries=(" : ", init_values=(";
  if (!f.iter_args.empty()) range += init_kw + inits + (f.iter_args.size() == 1 ? ",)" : ")");
  if (!f.inplace_carries.empty()) range += ", inplace_carries=" + print_int_list(f.inplace_carries);
  if (!f.lent_inits.empty()) range += ", lent_inits=" + print_int_list(f.lent_inits);   // KernelLendLoopInits
  // The chunk request (spec anchor_features §7) prints as the DSL keywords that set it.
  if (f.chunk.chunk > 0) {
    range += ", chunk=" + std::to_string(f.chunk.chunk) + ", chunk_policy=" + quote(to_string(f.chunk.policy));
  }
  const Attrs& rest = f.attrs;
  if (f.chunk_stride) range += ", chunk_stride=" + std::to_string(f.chunk_stride);   // SplitChunkedLoops
  if (f.loop_origin != LoopOrigin::User) range += std::string(", loop_origin=\"") + to_string(f.loop_origin) + "\"";
  if (!rest.empty()) range += ", attrs=" + print_attr_dict(rest);
  if (!f.carries.empty()) {
    std::string cs;
    for (size_t k = 0; k < f.carries.size(); ++k) {
      const LoopCarry& c = f.carries[k];
      cs += (k ? ", " : "") + (!c.rebind ? std::string("pl.alias") : c.slots ? "pl.slots(" + std::to_string(c.slots) + ")" : std::string("pl.rebind"));
    }
    range += ", carries=(" + cs + (f.carries.size() == 1 ? ",)" : ")");
  }
  if (f.trip_count >= 0) range += ", trip_count=" + std::to_string(f.trip_count);
  if (f.counted) range += ", counted=True";   // StampCountedLoops
  range += ")";
  std::string target = names_.define(f.loop_var.get());
  if (!f.iter_args.empty()) {
    target += ", (";
    for (size_t k = 0; k < f.iter_args.size(); ++k) target += (k ? ", " : "") + names_.define(f.iter_args[k].get());
    target += f.iter_args.size() == 1 ? ",)" : ")";
  }
  line(indent, "for " + target + " in " + range + ":");
  yield_targets_.push_back(&f.return_vars);
  print_body(f.body, indent + 1);
  yield_targets_.pop_back();
}

void Printer::print_if(const IfStmt& s, int indent, bool is_elif) {
  line(indent, std::string(is_elif ? "elif " : "if ") + print_expr(s.cond, 0) + ":");
  yield_targets_.push_back(&s.return_vars);
  print_body(s.then_body, indent + 1);
  if (s.else_body) {
    auto else_stmts = flatten_stmts(s.else_body);
    auto* nested = else_stmts.size() == 1 ? else_stmts[0]->as<IfStmt>() : nullptr;
    if (nested && s.return_vars.empty() && nested->return_vars.empty()) {
      yield_targets_.pop_back();
      print_if(*nested, indent, true);
      return;
    }
    line(indent, "else:");
    print_body(s.else_body, indent + 1);
  }
  yield_targets_.pop_back();
}

void Printer::print_scope(const ScopeStmt& s, int indent) {
  std::vector<std::string> parts;
  std::set<std::string> done;
  const char* fn = "pl.at";
  if (s.scope_kind == ScopeKind::Spmd) {
    fn = "pl.spmd";
    auto it = s.attrs.find("core_num");
    if (it != s.attrs.end()) {
      parts.push_back(print_attr_value("core_num", it->second));
      done.insert("core_num");
    }
  } else if (s.scope_kind == ScopeKind::Cluster) {
    fn = "pl.cluster";
  } else {
    auto it = s.attrs.find("level");
    if (it != s.attrs.end()) {
      parts.push_back("level=" + print_attr_value("level", it->second));
      done.insert("level");
    }
  }
  // split / slot_num (spec anchor_features §5) print as the DSL entry that set them.
  std::string split_entry;
  if (auto* split = attr_get<int64_t>(s.attrs, "split")) {
    static const char* kModes[] = {"NONE", "UP_DOWN", "LEFT_RIGHT"};
    split_entry = std::string("pl.split(pl.SplitMode.") + (*split >= 0 && *split <= 2 ? kModes[*split] : "NONE");
    if (auto* slots = attr_get<int64_t>(s.attrs, "slot_num")) split_entry += ", slot_num=" + std::to_string(*slots);
    split_entry += ")";
    done.insert("split");
    done.insert("slot_num");
  }
  done.insert("auto_chunk");
  // The keywords in name order, the typed task options among the attrs (a stable printed form).
  std::map<std::string, std::string> keywords;
  for (auto& [k, v] : s.attrs) {
    // dump_vars (spec anchor_features §6) prints as the DSL keyword that sets it.
    if (!done.count(k)) keywords[k] = (k == "dump_vars" ? std::string("dumps") : k) + "=" + print_attr_value(k, v);
  }
  const ScopeOptions& o = s.options;
  if (o.allow_early_resolve) keywords["allow_early_resolve"] = "allow_early_resolve=True";
  if (!o.deps.empty()) keywords["deps"] = "deps=" + print_list(o.deps);
  if (!o.no_dep_args.empty()) keywords["no_dep_args"] = "no_dep_args=" + print_list(o.no_dep_args);
  if (o.predicate) keywords["predicate"] = "predicate=" + print_predicate(o.predicate);
  if (o.sync_start) keywords["sync_start"] = "sync_start=True";
  for (auto& kv : keywords) parts.push_back(kv.second);
  // auto_chunk (spec anchor_features §7) prints as its optimizations= entry, after a split.
  std::string opts = split_entry;
  if (auto* ac = attr_get<bool>(s.attrs, "auto_chunk"); ac && *ac) opts += (opts.empty() ? "" : ", ") + std::string("pl.auto_chunk");
  if (!opts.empty()) parts.push_back("optimizations=[" + opts + "]");
  std::string call = std::string(fn) + "(";
  for (size_t k = 0; k < parts.size(); ++k) call += (k ? ", " : "") + parts[k];
  call += ")";
  if (s.block_var) {
    line(indent, "for " + names_.define(s.block_var.get()) + " in " + call + ":");
  } else if (s.task_id_var) {
    line(indent, "with " + call + " as " + names_.define(s.task_id_var.get()) + ":");
  } else {
    line(indent, "with " + call + ":");
  }
  yield_targets_.push_back(nullptr);
  print_body(s.body, indent + 1);
  yield_targets_.pop_back();
}

// ---- functions and programs ----

std::string Printer::function(const Function& f, int indent) {
  VarCensus census;
  census.visit_function(f);
  census_ = std::move(census.count);
  names_.avoid(census.names);

  std::string deco = std::string("@pl.function(type=pl.FunctionType.") + to_string(f.type);
  if (f.level != Level::None) deco += std::string(", level=pl.Level.") + to_string(f.level);
  if (f.role != Role::None) deco += std::string(", role=pl.Role.") + to_string(f.role);
  if (f.core_type != CoreType::Unknown) deco += std::string(", core_type=pl.CoreType.") + to_string(f.core_type);
  if (!f.param_slots.empty()) deco += ", param_slots=" + print_int_list(f.param_slots);
  if (!f.group_sync.waits.empty()) deco += ", group_waits=" + print_int_list(f.group_sync.waits);
  if (!f.group_sync.signals.empty()) deco += ", group_signals=" + print_int_list(f.group_sync.signals);
  if (!f.returned_params.empty()) deco += ", returned_params=" + print_int_list(f.returned_params);
  if (!f.group_kernels.aic.empty()) deco += ", group_aic=" + quote(f.group_kernels.aic);
  if (!f.group_kernels.aiv.empty()) deco += ", group_aiv=" + quote(f.group_kernels.aiv);
  if (f.task_statements != 0) deco += ", task_statements=" + std::to_string(f.task_statements);
  // auto_scope=False is a decorator keyword (spec anchor_features §4), never inside attrs=.
  std::map<std::string, AttrValue> attrs = f.attrs;
  const bool* auto_scope = attr_get<bool>(f.attrs, "auto_scope");
  const bool no_auto_scope = auto_scope && !*auto_scope;
  if (auto_scope) attrs.erase("auto_scope");
  if (!attrs.empty()) deco += ", attrs=" + print_attr_dict(attrs);
  if (no_auto_scope) deco += ", auto_scope=False";
  // task_ids= names body Vars: spliced in here once the body has given them their names.
  const size_t task_ids_at = out_.str().size() + static_cast<size_t>(indent) * 4 + deco.size();
  line(indent, deco + ")");

  // Parameters fill lines of at most kLineWidth columns; continuation lines align with the
  // opening parenthesis (the layout of docs/dsl.md).
  const size_t kLineWidth = 100;
  std::string head = "def " + f.name + "(";
  std::string sig = head + "self";
  size_t line_start = 0;
  // (Characters, not bytes: a non-ASCII name must not shift the continuation lines.)
  size_t head_chars = 0;
  for (unsigned char c : head) head_chars += (c & 0xC0) != 0x80;
  const size_t align = static_cast<size_t>(indent) * 4 + head_chars;
  std::string tail = ")";
  if (f.return_types.size() == 1) {
    tail += " -> " + print_type(f.return_types[0]);
  } else if (f.return_types.size() > 1) {
    tail += " -> tuple[";
    for (size_t k = 0; k < f.return_types.size(); ++k) tail += (k ? ", " : "") + print_type(f.return_types[k]);
    tail += "]";
  }
  tail += ":";
  for (size_t k = 0; k < f.params.size(); ++k) {
    const Var* p = f.params[k].get();
    std::string ann = print_type(p->type);
    ParamDirection d = k < f.param_directions.size() ? f.param_directions[k] : ParamDirection::In;
    if (d == ParamDirection::Out) ann = "pl.Out[" + ann + "]";
    if (d == ParamDirection::InOut) ann = "pl.InOut[" + ann + "]";
    std::string param = names_.define(p) + ": " + ann;
    size_t col = (line_start == 0 ? static_cast<size_t>(indent) * 4 : 0) + sig.size() - line_start;
    // The last parameter shares its line with the return annotation.
    size_t after = k + 1 == f.params.size() ? tail.size() : 1;
    if (col + 2 + param.size() + after > kLineWidth) {
      sig += ",\n" + std::string(align, ' ');
      line_start = sig.size() - align;
    } else {
      sig += ", ";
    }
    sig += param;
  }
  sig += tail;
  line(indent, sig);
  print_body(f.body, indent + 1);
  std::string body_options;
  if (!f.task_ids.empty()) body_options += ", task_ids=" + print_task_ids(f.task_ids);
  if (!f.batched_creates.empty()) {
    body_options += ", batched_creates=[";
    for (size_t k = 0; k < f.batched_creates.size(); ++k) {
      body_options += (k ? ", " : "") + quote(var_name(f.batched_creates[k].get()));
    }
    body_options += "]";
  }
  if (!f.array_backings.empty()) {
    body_options += ", array_backings={";
    for (size_t k = 0; k < f.array_backings.size(); ++k) {
      const ArrayBackingEntry& e = f.array_backings[k];
      body_options += (k ? ", " : "") + quote(var_name(e.version.get())) + ": " + quote(var_name(e.backing.get()));
    }
    body_options += "}";
  }
  for (auto& [option, vars] : {std::pair<const char*, const std::vector<VarPtr>*>{"non_negative_vars", &f.non_negative_vars},
                                {"call_operands", &f.call_operands}, {"open_calls", &f.open_calls},
                                {"cut_calls", &f.cut_calls}, {"carried_operands", &f.carried_operands}}) {
    if (vars->empty()) continue;
    body_options += std::string(", ") + option + "=[";
    for (size_t k = 0; k < vars->size(); ++k) body_options += (k ? ", " : "") + quote(var_name((*vars)[k].get()));
    body_options += "]";
  }
  if (!body_options.empty()) {
    std::string all = out_.str();
    all.insert(task_ids_at, body_options);
    out_.str(all);
    out_.seekp(0, std::ios::end);
  }
  return out_.str();
}

// `{"t": pl.task_id(fresh=True, read=True), "prev_1": pl.task_id(slots=4)}` (ResolveTaskIds).
std::string Printer::print_task_ids(const std::vector<TaskIdInfo>& ids) {
  std::string out = "{";
  for (size_t k = 0; k < ids.size(); ++k) {
    const TaskIdInfo& t = ids[k];
    std::string facts;
    if (t.slots) facts += "slots=" + std::to_string(t.slots);
    if (t.fresh) facts += std::string(facts.empty() ? "" : ", ") + "fresh=True";
    if (t.read) facts += std::string(facts.empty() ? "" : ", ") + "read=True";
    if (t.submit) facts += std::string(facts.empty() ? "" : ", ") + "at_submit=True";
    out += (k ? ", " : "") + quote(var_name(t.var.get())) + ": pl.task_id(" + facts + ")";
  }
  return out + "}";
}

std::string Printer::program(const Program& p) {
  out_ << "import pypto.language as pl\n\n";
  if (!p.dynamic_dims.empty()) {
    for (auto& d : p.dynamic_dims) out_ << names_.define(d.get()) << " = pl.dynamic(" << quote(d->name) << ")\n";
    out_ << "\n";
  }
  out_ << "\n@pl.program\nclass " << sanitize(p.name) << ":\n";
  if (p.functions.empty()) line(1, "pass");
  // Each function has its own name scope; the dynamic dims are shared by all.
  NameTable globals = names_;
  for (size_t k = 0; k < p.functions.size(); ++k) {
    if (k) out_ << "\n";
    names_ = globals;
    function(*p.functions[k], 1);
  }
  return out_.str();
}

}  // namespace

std::string python_print(const ProgramPtr& p) {
  PYPTO_CHECK(p, "python_print: null program");
  return Printer().program(*p);
}

std::string python_print(const FunctionPtr& f) {
  PYPTO_CHECK(f, "python_print: null function");
  return Printer().function(*f, 0);
}

std::string python_print(const StmtPtr& s) { return Printer().stmt(s); }

std::string python_print(const ExprPtr& e) { return Printer().expr(e); }

std::string python_print(const TypePtr& t) { return Printer().type(t); }

}  // namespace pypto::ir
