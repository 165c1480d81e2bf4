// Python bindings of the IR (`pypto._core.ir`): enums, Span, types, expression and statement
// nodes (read-only fields + checking `make` factories), Function, Program, op registry
// queries, the printer, structural equality/hash, and translation of C++ errors to the
// Python classes of `pypto.errors`.
//
//   from pypto._core import ir
//   t = ir.TensorType.make([ir.ConstInt.make(16)], ir.DataType.FP32)
//   a = ir.Var.make("a", t)
//   ir.python_print(a)          # "a"
//
// Nodes are held by std::shared_ptr<const T>; a function returning ExprPtr/StmtPtr/TypePtr
// yields the most-derived Python class. Node identity (==, hash) is the C++ pointer, so a
// Var can key a Python dict; Types compare structurally.
#include <nanobind/nanobind.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>
#include <string>
#include <vector>

#include "bindings.h"
#include "ir_casters.h"
#include "pypto/ir/enums.h"
#include "pypto/ir/error.h"
#include "pypto/ir/function.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/visitor.h"
#include "pypto/ir/structural_equal.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {
namespace {

using namespace pypto::ir;

// Raise `pypto.errors.<cls_name>(*args, **kwargs)`; falls back to RuntimeError when the
// Python package is not importable (e.g. the bare extension module in a C++ build tree).
void raise_python_error(const char* cls_name, nb::tuple args, nb::dict kwargs, const char* fallback_text) {
  try {
    nb::module_ errors = nb::module_::import_("pypto.errors");
    nb::object cls = errors.attr(cls_name);
    nb::object inst = cls(*args, **kwargs);
    PyErr_SetObject(cls.ptr(), inst.ptr());
  } catch (const nb::python_error&) {
    PyErr_SetString(PyExc_RuntimeError, fallback_text);
  }
}

void translate_errors(const std::exception_ptr& p, void*) {
  try {
    std::rethrow_exception(p);
  } catch (const UserError& e) {
    const Span& s = e.span();
    nb::dict kw;
    kw["file"] = s.file.empty() ? nb::none() : nb::cast(s.file.str());
    kw["line"] = s.line;
    kw["col"] = s.col;
    kw["end_line"] = s.end_line;
    kw["end_col"] = s.end_col;
    kw["source_line"] = s.source_line.str();
    kw["help"] = e.help();
    // The error kind picks the PyptoError subclass (pypto.errors.DependencyError is also a ValueError).
    const char* cls = dynamic_cast<const DependencyError*>(&e) ? "DependencyError" : "PyptoError";
    raise_python_error(cls, nb::make_tuple(e.message()), kw, e.what());
  } catch (const InternalError& e) {
    raise_python_error("InternalCompilerError", nb::make_tuple(std::string(e.what())), nb::dict(), e.what());
  }
}

// Identity semantics for nodes: two Python wrappers of the same C++ node are equal.
template <class C>
void def_identity(C& cls) {
  using T = typename C::Type;
  cls.def("__eq__", [](const T& a, nb::handle b) {
    const T* other = nb::isinstance<T>(b) ? nb::inst_ptr<T>(b) : nullptr;
    return other == &a;
  });
  cls.def("__ne__", [](const T& a, nb::handle b) {
    const T* other = nb::isinstance<T>(b) ? nb::inst_ptr<T>(b) : nullptr;
    return other != &a;
  });
  cls.def("__hash__", [](const T& a) { return static_cast<Py_ssize_t>(reinterpret_cast<uintptr_t>(&a) >> 4); });
  cls.def("same_as", [](const T& a, const T& b) { return &a == &b; }, "other"_a,
          "True when both wrap the same C++ node (pointer identity).");
}

void bind_enums(nb::module_& m) {
#define V(E, name) .value(#name, E::name)
  nb::enum_<DataType>(m, "DataType")
      V(DataType, BOOL) V(DataType, INT8) V(DataType, INT16) V(DataType, INT32) V(DataType, INT64)
      V(DataType, UINT8) V(DataType, UINT16) V(DataType, UINT32) V(DataType, UINT64)
      V(DataType, FP16) V(DataType, BF16) V(DataType, FP32) V(DataType, INDEX) V(DataType, TASK_ID);
  nb::enum_<Layout>(m, "Layout") V(Layout, ND) V(Layout, DN);
  nb::enum_<MemorySpace>(m, "MemorySpace")
      V(MemorySpace, Vec) V(MemorySpace, Mat) V(MemorySpace, Left) V(MemorySpace, Right) V(MemorySpace, Acc);
  nb::enum_<FunctionType>(m, "FunctionType")
      V(FunctionType, Opaque) V(FunctionType, Orchestration) V(FunctionType, InCore) V(FunctionType, AIC)
      V(FunctionType, AIV) V(FunctionType, Group) V(FunctionType, Spmd) V(FunctionType, Inline);
  nb::enum_<Level>(m, "Level")
      V(Level, None) V(Level, AIC) V(Level, AIV) V(Level, CORE_GROUP) V(Level, CHIP) V(Level, HOST) V(Level, CLUSTER);
  nb::enum_<Role>(m, "Role") V(Role, None) V(Role, Orchestrator) V(Role, Worker);
  nb::enum_<CoreType>(m, "CoreType") V(CoreType, Unknown) V(CoreType, AIC) V(CoreType, AIV) V(CoreType, MIXED);
  nb::enum_<ParamDirection>(m, "ParamDirection") V(ParamDirection, In) V(ParamDirection, Out) V(ParamDirection, InOut);
  nb::enum_<ArgDirection>(m, "ArgDirection")
      V(ArgDirection, Unset) V(ArgDirection, In) V(ArgDirection, Out) V(ArgDirection, InOut) V(ArgDirection, NoDep)
      V(ArgDirection, Scalar);
  nb::enum_<ForKind>(m, "ForKind") V(ForKind, Sequential) V(ForKind, Parallel) V(ForKind, Unroll);
  nb::enum_<ChunkPolicy>(m, "ChunkPolicy") V(ChunkPolicy, Guarded) V(ChunkPolicy, LeadingFull);
  nb::enum_<LoopOrigin>(m, "LoopOrigin")
      V(LoopOrigin, User) V(LoopOrigin, ChunkOuter) V(LoopOrigin, ChunkInner) V(LoopOrigin, ChunkRemainder);
  nb::enum_<ScopeKind>(m, "ScopeKind") V(ScopeKind, At) V(ScopeKind, Spmd) V(ScopeKind, Cluster);
  nb::enum_<RuntimeScopeMode>(m, "RuntimeScopeMode") V(RuntimeScopeMode, Auto) V(RuntimeScopeMode, Manual);
  nb::enum_<BinaryOp>(m, "BinaryOp")
      V(BinaryOp, Add) V(BinaryOp, Sub) V(BinaryOp, Mul) V(BinaryOp, Div) V(BinaryOp, FloorDiv) V(BinaryOp, Mod)
      V(BinaryOp, Min) V(BinaryOp, Max) V(BinaryOp, Eq) V(BinaryOp, Ne) V(BinaryOp, Lt) V(BinaryOp, Le)
      V(BinaryOp, Gt) V(BinaryOp, Ge) V(BinaryOp, And) V(BinaryOp, Or)
      V(BinaryOp, BitAnd) V(BinaryOp, BitOr) V(BinaryOp, BitXor) V(BinaryOp, Shl) V(BinaryOp, Shr);
  nb::enum_<UnaryOp>(m, "UnaryOp") V(UnaryOp, Neg) V(UnaryOp, Not) V(UnaryOp, BitNot);
  nb::enum_<TypeKind>(m, "TypeKind")
      V(TypeKind, Scalar) V(TypeKind, Tensor) V(TypeKind, Tile) V(TypeKind, Tuple) V(TypeKind, Array);
  nb::enum_<NodeKind>(m, "NodeKind")
#define PYPTO_EXPR_NODE(Name) V(NodeKind, Name)
#define PYPTO_STMT_NODE(Name) V(NodeKind, Name)
#include "pypto/ir/node_kinds.def"
      ;
#undef V

  m.def("is_float", &is_float, "dtype"_a);
  m.def("is_integer", &is_integer, "dtype"_a);
  m.def("is_signed", &is_signed, "dtype"_a);
  m.def("bit_width", &bit_width, "dtype"_a);
  m.def("binary_op_symbol", [](BinaryOp op) { return std::string(to_string(op)); }, "op"_a,
        "The Python operator of a BinaryOp: '+', '//', '==', 'and', ...");
  m.def("unary_op_symbol", [](UnaryOp op) { return std::string(to_string(op)); }, "op"_a);
}

void bind_errors(nb::module_& m) {
  m.def("render_user_error", &UserError::render, "message"_a, "span"_a, "help"_a = "",
        "C++ UserError::render: the diagnostic text pypto.errors.PyptoError reproduces.");
  m.def(
      "raise_user_error",
      [](const std::string& message, const Span& span, const std::string& help) { throw UserError(message, span, help); },
      "message"_a, "span"_a, "help"_a = "", "Throw a C++ UserError (for tests of the error translation).");
}

// The SharedText of Python str `text` for Span field `slot` (0 = file, 1 = source line). The
// frontend builds one Span per IR node, mostly with the file and line text of the node before:
// each slot keeps the last Python str it saw with its SharedText, so those nodes share one
// text (no copy) and equal text is shared even from a different str object.
SharedText shared_span_text(nb::handle text, int slot) {
  struct Last {
    PyObject* str = nullptr;   // a strong reference, deliberately never released at exit
    SharedText text;
  };
  static Last last[2];   // guarded by the GIL
  if (!PyUnicode_Check(text.ptr())) throw nb::type_error("Span: file and source_line must be str");
  Last& l = last[slot];
  if (l.str && (l.str == text.ptr() || PyUnicode_Compare(l.str, text.ptr()) == 0)) return l.text;
  Py_ssize_t n = 0;
  const char* data = PyUnicode_AsUTF8AndSize(text.ptr(), &n);
  if (!data) throw nb::python_error();
  l.text = SharedText(std::string(data, static_cast<size_t>(n)));
  Py_XDECREF(l.str);
  l.str = text.ptr();
  Py_INCREF(l.str);
  return l.text;
}

void bind_span(nb::module_& m) {
  nb::class_<Span>(m, "Span", "A source location: file, 1-based line/col, exclusive end_col, the line's text.")
      .def(nb::init<>())
      .def(
          "__init__",
          [](Span* s, nb::handle file, int line, int col, int end_line, int end_col, nb::handle source_line) {
            new (s) Span{shared_span_text(file, 0), line, col, end_line, end_col, shared_span_text(source_line, 1)};
          },
          "file"_a, "line"_a = 0, "col"_a = 0, "end_line"_a = 0, "end_col"_a = 0, "source_line"_a = "")
      .def_prop_rw(
          "file", [](const Span& s) { return s.file.str(); },
          [](Span& s, nb::handle file) { s.file = shared_span_text(file, 0); })
      .def_rw("line", &Span::line)
      .def_rw("col", &Span::col)
      .def_rw("end_line", &Span::end_line)
      .def_rw("end_col", &Span::end_col)
      .def_prop_rw(
          "source_line", [](const Span& s) { return s.source_line.str(); },
          [](Span& s, nb::handle text) { s.source_line = shared_span_text(text, 1); })
      .def("known", &Span::known)
      .def_static("unknown", &Span::unknown)
      .def("__repr__", [](const Span& s) {
        return "Span(" + (s.file.empty() ? std::string("<unknown>") : s.file.str()) + ":" + std::to_string(s.line) + ":" +
               std::to_string(s.col) + "-" + std::to_string(s.end_line) + ":" + std::to_string(s.end_col) + ")";
      });
}

void bind_types(nb::module_& m) {
  auto type_cls = nb::class_<Type>(m, "Type", "Base of all IR types (compare structurally with ==).")
                      .def_ro("kind", &Type::kind)
                      .def("__eq__", [](const Type& a, nb::handle b) {
                        if (!nb::isinstance<Type>(b)) return false;
                        TypePtr pa(std::shared_ptr<const Type>{}, &a), pb(std::shared_ptr<const Type>{}, nb::inst_ptr<Type>(b));
                        return structural_equal(pa, pb);
                      })
                      .def("__ne__", [](const Type& a, nb::handle b) {
                        if (!nb::isinstance<Type>(b)) return true;
                        TypePtr pa(std::shared_ptr<const Type>{}, &a), pb(std::shared_ptr<const Type>{}, nb::inst_ptr<Type>(b));
                        return !structural_equal(pa, pb);
                      })
                      .def("__hash__", [](const Type& a) {
                        TypePtr pa(std::shared_ptr<const Type>{}, &a);
                        return static_cast<Py_ssize_t>(structural_hash(pa));
                      })
                      .def("__repr__", [](const Type& a) {
                        TypePtr pa(std::shared_ptr<const Type>{}, &a);
                        return python_print(pa);
                      });
  (void)type_cls;

  nb::class_<ScalarType, Type>(m, "ScalarType")
      .def_ro("dtype", &ScalarType::dtype)
      .def_static("make", &ScalarType::make, "dtype"_a);
  nb::class_<TensorType, Type>(m, "TensorType")
      .def_ro("shape", &TensorType::shape)
      .def_ro("dtype", &TensorType::dtype)
      .def_ro("layout", &TensorType::layout)
      .def_static("make", &TensorType::make, "shape"_a, "dtype"_a, "layout"_a = Layout::ND);
  nb::class_<TileType, Type>(m, "TileType")
      .def_ro("shape", &TileType::shape)
      .def_ro("dtype", &TileType::dtype)
      .def_ro("memory", &TileType::memory)
      .def_ro("valid_shape", &TileType::valid_shape)
      .def_static("make", &TileType::make, "shape"_a, "dtype"_a, "memory"_a = MemorySpace::Vec,
                  "valid_shape"_a = std::vector<ExprPtr>{});
  nb::class_<TupleType, Type>(m, "TupleType")
      .def_ro("elements", &TupleType::elements)
      .def_static("make", &TupleType::make, "elements"_a)
      .def_static("unit", &TupleType::unit);
  nb::class_<ArrayType, Type>(m, "ArrayType")
      .def_ro("size", &ArrayType::size)
      .def_ro("dtype", &ArrayType::dtype)
      .def_static("make", &ArrayType::make, "size"_a, "dtype"_a);
  m.def("is_task_id", &is_task_id, "type"_a, "True for Scalar[TASK_ID] and Array[N, TASK_ID].");
}

void bind_exprs(nb::module_& m) {
  auto node = nb::class_<Node>(m, "Node", "Base of expressions and statements.")
                  .def_ro("kind", &Node::kind)
                  .def_ro("span", &Node::span);
  def_identity(node);

  nb::class_<Expr, Node>(m, "Expr")
      .def_ro("type", &Expr::type)
      .def("__repr__", [](const Expr& e) { return python_print(ExprPtr(std::shared_ptr<const Expr>{}, &e)); });

  nb::class_<Var, Expr>(m, "Var")
      .def_ro("name", &Var::name)
      .def_static("make", &Var::make, "name"_a, "type"_a, "span"_a = Span{});
  nb::class_<IterArg, Var>(m, "IterArg")
      .def_ro("init", &IterArg::init)
      .def_static("make", &IterArg::make, "name"_a, "type"_a, "init"_a, "span"_a = Span{});
  nb::class_<ConstInt, Expr>(m, "ConstInt")
      .def_ro("value", &ConstInt::value)
      .def_static("make", &ConstInt::make, "v"_a, "dtype"_a = DataType::INDEX, "span"_a = Span{});
  nb::class_<ConstFloat, Expr>(m, "ConstFloat")
      .def_ro("value", &ConstFloat::value)
      .def_static("make", &ConstFloat::make, "v"_a, "dtype"_a = DataType::FP32, "span"_a = Span{});
  nb::class_<ConstBool, Expr>(m, "ConstBool")
      .def_ro("value", &ConstBool::value)
      .def_static("make", &ConstBool::make, "v"_a, "span"_a = Span{});
  nb::class_<BinaryExpr, Expr>(m, "BinaryExpr")
      .def_ro("op", &BinaryExpr::op)
      .def_ro("a", &BinaryExpr::a)
      .def_ro("b", &BinaryExpr::b)
      .def_static("make", &BinaryExpr::make, "op"_a, "a"_a, "b"_a, "span"_a = Span{});
  nb::class_<UnaryExpr, Expr>(m, "UnaryExpr")
      .def_ro("op", &UnaryExpr::op)
      .def_ro("a", &UnaryExpr::a)
      .def_static("make", &UnaryExpr::make, "op"_a, "a"_a, "span"_a = Span{});
  nb::class_<Cast, Expr>(m, "Cast")
      .def_ro("value", &Cast::value)
      .def_static("make", &Cast::make, "value"_a, "dtype"_a, "span"_a = Span{});
  nb::class_<Call, Expr>(m, "Call")
      .def_ro("callee", &Call::callee)
      .def_ro("is_op", &Call::is_op)
      .def_ro("args", &Call::args)
      .def_ro("attrs", &Call::attrs)
      .def_ro("arg_directions", &Call::arg_directions)
      .def_ro("compiler_manual_dep_edges", &Call::compiler_manual_dep_edges)
      .def_ro("dump_vars", &Call::dump_vars)
      .def_ro("manual_dep_edges", &Call::manual_dep_edges, "the user's TaskId edges of a system.task_dummy barrier")
      .def_ro("shares_source_tile", &Call::shares_source_tile, "Stamped by KernelShareTileMoves (False before).")
      .def_ro("reads_in_place", &Call::reads_in_place, "Stamped by KernelInPlaceMatmulLoads on tile.loads (False before).")
      .def_ro("cpu_base", &Call::cpu_base, "Stamped by ResolvePeerBufferBases on pipe buffers (-1 before).")
      .def_ro("peer_base", &Call::peer_base,
              "Stamped by ResolvePeerBufferBases on imports: the peer's base (-1 pl.AUTO; -2 before).")
      .def_prop_ro("task_ref_task", [](const Call& c) { return c.task_ref.task; },
                   "A system.task_ref's producer TaskId name (AutoDeriveTaskDependencies; '' on other calls).")
      .def_prop_ro("task_ref_slot", [](const Call& c) { return c.task_ref.slot; }, "A system.task_ref's slot= (-1: none).")
      .def_prop_ro("task_ref_every_iteration", [](const Call& c) { return c.task_ref.every_iteration; },
                   "A system.task_ref's every_iteration=.")
      .def_static("make_op", &Call::make_op, "op"_a, "args"_a, "attrs"_a = Attrs{}, "span"_a = Span{})
      .def_static("make_func", &Call::make_func, "callee"_a, "args"_a, "result"_a,
                  "dirs"_a = std::vector<ArgDirection>{}, "span"_a = Span{}, "attrs"_a = Attrs{});
  nb::class_<Submit, Expr>(m, "Submit")
      .def_ro("callee", &Submit::callee)
      .def_ro("args", &Submit::args)
      .def_ro("arg_directions", &Submit::arg_directions)
      .def_ro("deps", &Submit::deps)
      .def_ro("core_num", &Submit::core_num)
      .def_ro("sync_start", &Submit::sync_start)
      .def_ro("allow_early_resolve", &Submit::allow_early_resolve)
      .def_ro("timing_slot", &Submit::timing_slot)
      .def_ro("predicate", &Submit::predicate)
      .def_ro("compiler_manual_dep_edges", &Submit::compiler_manual_dep_edges)
      .def_ro("dump_vars", &Submit::dump_vars)
      .def_static("make", &Submit::make, "callee"_a, "args"_a, "callee_returns"_a,
                  "deps"_a = std::vector<ExprPtr>{}, "core_num"_a.none() = nb::none(), "sync_start"_a = false,
                  "allow_early_resolve"_a = false, "timing_slot"_a = -1, "predicate"_a.none() = nb::none(),
                  "dirs"_a = std::vector<ArgDirection>{}, "span"_a = Span{});
  m.def("with_compiler_dep_edges", &with_compiler_dep_edges, "task"_a, "edges"_a,
        "A copy of a Call / Submit with compiler_manual_dep_edges = edges (TaskIds; AutoDeriveTaskDependencies).");
  m.def("with_shares_source_tile", &with_shares_source_tile, "call"_a, "shares"_a,
        "A copy of a tile.move Call with shares_source_tile = shares (KernelShareTileMoves).");
  m.def("with_reads_in_place", &with_reads_in_place, "call"_a, "in_place"_a,
        "A copy of a tile.load Call with reads_in_place = in_place (KernelInPlaceMatmulLoads).");
  m.def("with_peer_base", &with_peer_base, "call"_a, "base"_a,
        "A copy of a system.import_peer_buffer Call with peer_base = base (ResolvePeerBufferBases).");
  m.def("with_cpu_base", &with_cpu_base, "call"_a, "cpu_base"_a,
        "A copy of a pipe-buffer Call with cpu_base = cpu_base (ResolvePeerBufferBases).");
  m.def("with_dump_vars", &with_dump_vars, "task"_a, "vars"_a,
        "A copy of a Call / Submit with dump_vars = vars (tensor arguments; pl.dump_tag / dumps=).");
  nb::class_<MakeTuple, Expr>(m, "MakeTuple")
      .def_ro("elements", &MakeTuple::elements)
      .def_static("make", &MakeTuple::make, "elements"_a, "span"_a = Span{});
  nb::class_<TupleGetItem, Expr>(m, "TupleGetItem")
      .def_ro("tuple", &TupleGetItem::tuple)
      .def_ro("index", &TupleGetItem::index)
      .def_static("make", &TupleGetItem::make, "tuple"_a, "index"_a, "span"_a = Span{});
}

// The TaskId Vars `body` defines, by printed name (how the parser resolves the names a printed
// pass result mentions: task_ids=, carried_task_ids=). `tuples` (optional) receives, for a Var
// defined as a tuple's element (`t = tup[k]`), that tuple Var.
std::map<std::string, VarPtr> TaskIdDefsByName(const StmtPtr& body, std::map<const Var*, VarPtr>* tuples = nullptr) {
  struct Defs : IRVisitor {
    std::map<std::string, VarPtr> by_name;
    std::map<const Var*, VarPtr>* tuples = nullptr;
    void add(const VarPtr& v) {
      if (v && is_task_id(v->type)) by_name.emplace(v->name, v);
    }
    void visit_(const AssignStmt* op) override {
      add(op->var);
      auto* g = op->value->as<TupleGetItem>();
      if (tuples && g && is_task_id(op->var->type)) {
        if (VarPtr t = as_var_ptr(g->tuple)) tuples->emplace(op->var.get(), t);
      }
      IRVisitor::visit_(op);
    }
    void visit_(const ForStmt* op) override {
      for (auto& ia : op->iter_args) add(ia);
      for (auto& rv : op->return_vars) add(rv);
      IRVisitor::visit_(op);
    }
    void visit_(const IfStmt* op) override {
      for (auto& rv : op->return_vars) add(rv);
      IRVisitor::visit_(op);
    }
    void visit_(const ScopeStmt* op) override {
      add(op->task_id_var);
      IRVisitor::visit_(op);
    }
  } defs;
  defs.tuples = tuples;
  if (body) defs.visit_stmt(body);
  return std::move(defs.by_name);
}

// `scope` with carried_task_ids given by printed name: [("prev_2", 0), ...] (the parser's
// reading of the scope option carried_task_ids=). ValueError naming an entry the body does not define.
std::shared_ptr<const RuntimeScopeStmt> WithCarriedTaskIdsNamed(const RuntimeScopeStmt& scope,
                                                               const std::vector<std::pair<std::string, int64_t>>& named) {
  const std::map<std::string, VarPtr> by_name = TaskIdDefsByName(scope.body);
  std::vector<ScopeTaskIdCarry> carries;
  for (auto& [name, slots] : named) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw nb::value_error(("'" + name + "' is not a TaskId the scope body defines").c_str());
    if (slots < 0) throw nb::value_error(("'" + name + "': slots must be >= 0").c_str());
    carries.push_back(ScopeTaskIdCarry{it->second, slots});
  }
  return scope.with_carried_task_ids(std::move(carries));
}

// `scope` with exit_values given by printed name: ["src_2", ...] (the parser's reading of the
// scope option exit_values=). The names are assignments or loop / if results the body defines
// (at any depth).
// ValueError naming an entry the body does not define.
std::shared_ptr<const RuntimeScopeStmt> WithExitValuesNamed(const RuntimeScopeStmt& scope,
                                                           const std::vector<std::string>& named) {
  struct Results : IRVisitor {
    std::map<std::string, VarPtr> by_name;
    void visit_(const AssignStmt* op) override {
      by_name.emplace(op->var->name, op->var);
      IRVisitor::visit_(op);
    }
    void visit_(const ForStmt* op) override {
      for (auto& rv : op->return_vars) by_name.emplace(rv->name, rv);
      IRVisitor::visit_(op);
    }
    void visit_(const IfStmt* op) override {
      for (auto& rv : op->return_vars) by_name.emplace(rv->name, rv);
      IRVisitor::visit_(op);
    }
  } results;
  results.visit_stmt(scope.body);
  std::vector<VarPtr> values;
  for (const std::string& name : named) {
    auto it = results.by_name.find(name);
    if (it == results.by_name.end())
      throw nb::value_error(("'" + name + "' is not an assignment, loop or if result the scope body defines").c_str());
    auto* st = it->second->type->as<ScalarType>();
    auto* at = it->second->type->as<ArrayType>();
    if (!it->second->type->is<TensorType>() && !(st && st->dtype != DataType::TASK_ID) &&
        !(at && at->dtype != DataType::TASK_ID))
      throw nb::value_error(("'" + name + "' is not a tensor, a number or an array of numbers").c_str());
    values.push_back(it->second);
  }
  return scope.with_exit_values(std::move(values));
}

void bind_stmts(nb::module_& m) {
  nb::class_<Stmt, Node>(m, "Stmt")
      .def("__repr__", [](const Stmt& s) { return python_print(StmtPtr(std::shared_ptr<const Stmt>{}, &s)); });

  nb::class_<AssignStmt, Stmt>(m, "AssignStmt")
      .def_ro("var", &AssignStmt::var)
      .def_ro("value", &AssignStmt::value)
      .def_static("make", &AssignStmt::make, "var"_a, "value"_a, "span"_a = Span{});
  nb::class_<EvalStmt, Stmt>(m, "EvalStmt")
      .def_ro("expr", &EvalStmt::expr)
      .def_static("make", &EvalStmt::make, "expr"_a, "span"_a = Span{});
  nb::class_<SeqStmts, Stmt>(m, "SeqStmts")
      .def_ro("stmts", &SeqStmts::stmts)
      .def_static("make", &SeqStmts::make, "stmts"_a, "span"_a = Span{});
  nb::class_<LoopCarry>(m, "LoopCarry")
      .def(nb::init<>())
      .def_rw("rebind", &LoopCarry::rebind)
      .def_rw("slots", &LoopCarry::slots)
      .def_static("alias", &LoopCarry::alias)
      .def_static("rebound", &LoopCarry::rebound, "slots"_a = 0)
      .def("__eq__", [](const LoopCarry& a, const LoopCarry& b) { return a == b; })
      .def("__repr__", [](const LoopCarry& c) {
        return !c.rebind ? std::string("pl.alias") : c.slots ? "pl.slots(" + std::to_string(c.slots) + ")" : std::string("pl.rebind");
      });
  nb::class_<ForStmt, Stmt>(m, "ForStmt")
      .def_ro("loop_var", &ForStmt::loop_var)
      .def_ro("start", &ForStmt::start)
      .def_ro("stop", &ForStmt::stop)
      .def_ro("step", &ForStmt::step)
      .def_ro("iter_args", &ForStmt::iter_args)
      .def_ro("body", &ForStmt::body)
      .def_ro("return_vars", &ForStmt::return_vars)
      .def_ro("for_kind", &ForStmt::for_kind)
      .def_ro("attrs", &ForStmt::attrs)
      .def_ro("carries", &ForStmt::carries, "Stamped by ClassifyIterArgCarry (empty before).")
      .def_ro("trip_count", &ForStmt::trip_count, "Stamped by StampStaticTripCounts (-1: unknown).")
      .def("with_results", &ForStmt::with_results, "carries"_a, "trip_count"_a)
      .def_ro("inplace_carries", &ForStmt::inplace_carries, "Stamped by KernelInPlaceCarries (empty before).")
      .def("with_inplace_carries", &ForStmt::with_inplace_carries, "carries"_a)
      .def_ro("lent_inits", &ForStmt::lent_inits, "Stamped by KernelLendLoopInits (empty before).")
      .def("with_lent_inits", &ForStmt::with_lent_inits, "inits"_a)
      .def_ro("chunk_stride", &ForStmt::chunk_stride, "Stamped by SplitChunkedLoops (0: not a run-time-step chunk loop).")
      .def_ro("loop_origin", &ForStmt::loop_origin, "Stamped by SplitChunkedLoops (User: not a split loop).")
      .def("with_chunk_split", &ForStmt::with_chunk_split, "origin"_a, "stride"_a)
      .def_prop_ro("chunk", [](const ForStmt& f) { return f.chunk.chunk; }, "The chunk=C request (parser; 0: none).")
      .def_prop_ro("chunk_policy", [](const ForStmt& f) { return f.chunk.policy; }, "The chunk_policy= of the request.")
      .def(
          "with_chunk", [](const ForStmt& f, int64_t chunk, ChunkPolicy policy) { return f.with_chunk(ChunkSpec{chunk, policy}); },
          "chunk"_a, "policy"_a = ChunkPolicy::Guarded, "A copy with the chunk request set (0: none).")
      .def_ro("counted", &ForStmt::counted, "Stamped by StampCountedLoops (False: printed `for (i = a; i < b; i += s)`).")
      .def("with_counted", &ForStmt::with_counted, "counted"_a)
      .def("with_typed_fields_of", &ForStmt::with_typed_fields_of, "other"_a,
           "A copy with every typed field (pass results, chunk request) of `other`.")
      .def_static("make", &ForStmt::make, "loop_var"_a, "start"_a, "stop"_a, "step"_a, "iter_args"_a, "body"_a,
                  "return_vars"_a, "kind"_a = ForKind::Sequential, "attrs"_a = Attrs{}, "span"_a = Span{});
  nb::class_<IfStmt, Stmt>(m, "IfStmt")
      .def_ro("cond", &IfStmt::cond)
      .def_ro("then_body", &IfStmt::then_body)
      .def_ro("else_body", &IfStmt::else_body)
      .def_ro("return_vars", &IfStmt::return_vars)
      .def_static("make", &IfStmt::make, "cond"_a, "then_body"_a, "else_body"_a.none() = nb::none(),
                  "return_vars"_a = std::vector<VarPtr>{}, "span"_a = Span{});
  nb::class_<YieldStmt, Stmt>(m, "YieldStmt")
      .def_ro("values", &YieldStmt::values)
      .def_static("make", &YieldStmt::make, "values"_a, "span"_a = Span{});
  nb::class_<ReturnStmt, Stmt>(m, "ReturnStmt")
      .def_ro("values", &ReturnStmt::values)
      .def_static("make", &ReturnStmt::make, "values"_a, "span"_a = Span{});
  nb::class_<ScopeOptions>(m, "ScopeOptions", "The typed task options of a pl.at / pl.spmd scope (parser).")
      .def(
          "__init__",
          [](ScopeOptions* self, std::vector<ExprPtr> deps, ExprPtr predicate, std::vector<ExprPtr> no_dep_args,
             bool sync_start, bool allow_early_resolve) {
            new (self) ScopeOptions{std::move(deps), std::move(predicate), std::move(no_dep_args), sync_start,
                                    allow_early_resolve};
          },
          "deps"_a = std::vector<ExprPtr>{}, "predicate"_a.none() = nb::none(), "no_dep_args"_a = std::vector<ExprPtr>{},
          "sync_start"_a = false, "allow_early_resolve"_a = false)
      .def_ro("deps", &ScopeOptions::deps)
      .def_ro("predicate", &ScopeOptions::predicate)
      .def_ro("no_dep_args", &ScopeOptions::no_dep_args)
      .def_ro("sync_start", &ScopeOptions::sync_start)
      .def_ro("allow_early_resolve", &ScopeOptions::allow_early_resolve)
      .def("empty", &ScopeOptions::empty);
  nb::class_<ScopeStmt, Stmt>(m, "ScopeStmt")
      .def_ro("scope_kind", &ScopeStmt::scope_kind)
      .def_ro("attrs", &ScopeStmt::attrs)
      .def_ro("body", &ScopeStmt::body)
      .def_ro("task_id_var", &ScopeStmt::task_id_var)
      .def_ro("block_var", &ScopeStmt::block_var)
      .def_ro("options", &ScopeStmt::options, "The typed task options (deps, predicate, no_dep_args, sync_start, "
              "allow_early_resolve).")
      .def("with_options", &ScopeStmt::with_options, "options"_a)
      .def_static("make", &ScopeStmt::make, "kind"_a, "attrs"_a, "body"_a, "task_id_var"_a.none() = nb::none(),
                  "block_var"_a.none() = nb::none(), "span"_a = Span{});
  nb::class_<ScopeTaskIdCarry>(m, "ScopeTaskIdCarry", "A TaskId declared before its runtime scope (ResolveTaskIds).")
      .def_ro("var", &ScopeTaskIdCarry::var)
      .def_ro("slots", &ScopeTaskIdCarry::slots, "0: one TaskId; N: a pl.slots(N) array carry");
  nb::class_<RuntimeScopeStmt, Stmt>(m, "RuntimeScopeStmt")
      .def_ro("mode", &RuntimeScopeStmt::mode)
      .def_ro("body", &RuntimeScopeStmt::body)
      .def_ro("carried_task_ids", &RuntimeScopeStmt::carried_task_ids,
              "Stamped by ResolveTaskIds: the TaskIds the following yield carries out (empty before).")
      .def("with_carried_task_ids_named", &WithCarriedTaskIdsNamed, "named"_a,
           "A copy with carried_task_ids given by name: [(\"prev_2\", slots), ...] (the parser's carried_task_ids=).")
      .def_ro("exit_values", &RuntimeScopeStmt::exit_values,
              "Stamped by StampScopeExits: the loop / if results read after the block (empty before).")
      .def("with_exit_values_named", &WithExitValuesNamed, "named"_a,
           "A copy with exit_values given by name: [\"src_2\", ...] (the parser's exit_values=).")
      .def_static("make", &RuntimeScopeStmt::make, "mode"_a, "body"_a, "span"_a = Span{});

  m.def("flatten_stmts", &flatten_stmts, "s"_a.none(), "Flatten a statement into a list (SeqStmts inlined).");
  m.def("make_seq", &make_seq, "stmts"_a, "span"_a = Span{},
        "A SeqStmts, or the single statement when there is exactly one.");
}

namespace {

// `fn` with task_ids given by printed name: {"t": (slots, fresh, read)} (the parser's reading of
// the @pl.function option task_ids=). ValueError naming an entry that is no TaskId of the body.
FunctionPtr WithTaskIdsNamed(const Function& fn, const std::vector<std::pair<std::string, std::vector<int64_t>>>& named) {
  std::map<const Var*, VarPtr> tuples;
  const std::map<std::string, VarPtr> by_name = TaskIdDefsByName(fn.body, &tuples);
  std::vector<TaskIdInfo> ids;
  for (auto& [name, facts] : named) {
    auto it = by_name.find(name);
    if (it == by_name.end()) throw nb::value_error(("'" + name + "' is not a TaskId the function body defines").c_str());
    PYPTO_CHECK(facts.size() == 4, "task_ids entry needs (slots, fresh, read, at_submit)");
    VarPtr submit;
    if (facts[3] != 0) {
      auto t = tuples.find(it->second.get());
      if (t == tuples.end() || !t->second->type->is<TupleType>()) {
        throw nb::value_error(("'" + name + "': at_submit=True needs a TaskId unpacked from a pl.submit").c_str());
      }
      submit = t->second;
    }
    ids.push_back(TaskIdInfo{it->second, facts[0], facts[1] != 0, facts[2] != 0, submit});
  }
  return fn.with_task_ids(std::move(ids));
}

}  // namespace

// `fn` with batched_creates given by printed name (the parser's batched_creates=). ValueError
// naming an entry that is no Var the body assigns.
// The Vars the body of `fn` assigns, by printed name. ValueError naming an unknown entry.
std::vector<VarPtr> AssignedVarsNamed(const Function& fn, const std::vector<std::string>& names) {
  struct Defs : IRVisitor {
    std::map<std::string, VarPtr> by_name;
    void visit_(const AssignStmt* op) override {
      by_name.emplace(op->var->name, op->var);
      IRVisitor::visit_(op);
    }
  } defs;
  if (fn.body) defs.visit_stmt(fn.body);
  std::vector<VarPtr> vars;
  for (const std::string& n : names) {
    auto it = defs.by_name.find(n);
    if (it == defs.by_name.end()) throw nb::value_error(("'" + n + "' is not a Var the function body assigns").c_str());
    vars.push_back(it->second);
  }
  return vars;
}

FunctionPtr WithBatchedCreatesNamed(const Function& fn, const std::vector<std::string>& names) {
  return fn.with_batched_creates(AssignedVarsNamed(fn, names));
}

// `fn` with call_operands / open_calls / cut_calls / carried_operands given by printed name (the
// parser's options of those names).
FunctionPtr WithCallOperandsNamed(const Function& fn, const std::vector<std::string>& names) {
  return fn.with_call_operands(AssignedVarsNamed(fn, names));
}
FunctionPtr WithOpenCallsNamed(const Function& fn, const std::vector<std::string>& names) {
  return fn.with_open_calls(AssignedVarsNamed(fn, names));
}
FunctionPtr WithCutCallsNamed(const Function& fn, const std::vector<std::string>& names) {
  return fn.with_cut_calls(AssignedVarsNamed(fn, names));
}
FunctionPtr WithCarriedOperandsNamed(const Function& fn, const std::vector<std::string>& names) {
  return fn.with_carried_operands(AssignedVarsNamed(fn, names));
}

// `fn` with array_backings given by printed name: [("w_1", "w"), ...] (the parser's
// array_backings=). A name resolves to a parameter or a Var the body defines (an assignment, a
// loop's iter_arg or result, an if result). ValueError naming an unknown or non-array entry.
FunctionPtr WithArrayBackingsNamed(const Function& fn, const std::vector<std::pair<std::string, std::string>>& named) {
  struct Defs : IRVisitor {
    std::map<std::string, VarPtr> by_name;
    void def(const VarPtr& v) { by_name.emplace(v->name, v); }
    void visit_(const AssignStmt* op) override {
      def(op->var);
      IRVisitor::visit_(op);
    }
    void visit_(const ForStmt* op) override {
      for (auto& ia : op->iter_args) def(ia);
      for (auto& rv : op->return_vars) def(rv);
      IRVisitor::visit_(op);
    }
    void visit_(const IfStmt* op) override {
      for (auto& rv : op->return_vars) def(rv);
      IRVisitor::visit_(op);
    }
  } defs;
  for (auto& p : fn.params) defs.def(p);
  if (fn.body) defs.visit_stmt(fn.body);
  auto array_var = [&](const std::string& n) {
    auto it = defs.by_name.find(n);
    if (it == defs.by_name.end() || !it->second->type->is<ArrayType>()) {
      throw nb::value_error(("'" + n + "' is not a pl.Array the function defines").c_str());
    }
    return it->second;
  };
  std::vector<ArrayBackingEntry> entries;
  for (auto& [version, backing] : named) entries.push_back(ArrayBackingEntry{array_var(version), array_var(backing)});
  return fn.with_array_backings(std::move(entries));
}

// `fn` with non_negative_vars given by printed name (the parser's non_negative_vars=). A name
// resolves to a dynamic-dim symbol of a tensor parameter or a loop variable of the body.
// ValueError naming an unknown entry.
FunctionPtr WithNonNegativeVarsNamed(const Function& fn, const std::vector<std::string>& names) {
  struct Defs : IRVisitor {
    std::map<std::string, VarPtr> by_name;
    void visit_(const AssignStmt* op) override {
      by_name.emplace(op->var->name, op->var);
      IRVisitor::visit_(op);
    }
    void visit_(const ForStmt* op) override {
      by_name.emplace(op->loop_var->name, op->loop_var);
      IRVisitor::visit_(op);
    }
  } defs;
  for (auto& p : fn.params) {
    if (auto* tt = p->type->as<TensorType>()) {
      for (const ExprPtr& d : tt->shape) {
        if (VarPtr v = as_var_ptr(d)) defs.by_name.emplace(v->name, v);
      }
    }
  }
  if (fn.body) defs.visit_stmt(fn.body);
  std::vector<VarPtr> vars;
  for (const std::string& n : names) {
    auto it = defs.by_name.find(n);
    if (it == defs.by_name.end()) {
      throw nb::value_error(("'" + n + "' is no dynamic dimension of a tensor parameter nor a loop variable").c_str());
    }
    vars.push_back(it->second);
  }
  return fn.with_non_negative_vars(std::move(vars));
}

void bind_function_program(nb::module_& m) {
  nb::class_<ArrayBackingEntry>(m, "ArrayBackingEntry", "Where one pl.Array version lives (Function.array_backings).")
      .def_ro("version", &ArrayBackingEntry::version)
      .def_ro("backing", &ArrayBackingEntry::backing);
  nb::class_<TaskIdInfo>(m, "TaskIdInfo", "What ResolveTaskIds decided about one TaskId value (Function.task_ids).")
      .def_ro("var", &TaskIdInfo::var)
      .def_ro("slots", &TaskIdInfo::slots, "0: one TaskId; N: names an array of N TaskId slots")
      .def_ro("fresh", &TaskIdInfo::fresh, "always valid (straight from a submission): no is_valid() guard")
      .def_ro("read", &TaskIdInfo::read, "named by a statement (deps=, carry init, yield, array op, copy)")
      .def_ro("submit", &TaskIdInfo::submit, "the pl.submit result tuple this TaskId unpacks (HOST declares it there), or None");
  nb::class_<GroupSync>(m, "GroupSync", "How a kernel called from a Group synchronises in its mixed task (KernelGroupSync).")
      .def_ro("waits", &GroupSync::waits)
      .def_ro("signals", &GroupSync::signals)
      .def("empty", &GroupSync::empty)
      .def("__eq__", [](const GroupSync& a, const GroupSync& b) { return a == b; });
  nb::class_<Function>(m, "Function")
      .def_ro("name", &Function::name)
      .def_ro("type", &Function::type)
      .def_ro("level", &Function::level)
      .def_ro("role", &Function::role)
      .def_ro("params", &Function::params)
      .def_ro("param_directions", &Function::param_directions)
      .def_ro("return_types", &Function::return_types)
      .def_ro("body", &Function::body)
      .def_ro("attrs", &Function::attrs)
      .def_ro("span", &Function::span)
      .def_ro("core_type", &Function::core_type, "Stamped by InferKernelCoreTypes (CoreType.Unknown before).")
      .def("with_core_type", &Function::with_core_type, "core_type"_a)
      .def_ro("group_sync", &Function::group_sync, "Stamped by KernelGroupSync (empty before).")
      .def_ro("param_slots", &Function::param_slots,
              "Stamped by KernelParamSlots: the task tensor / scalar slot each kernel param reads (empty before).")
      .def("with_param_slots", &Function::with_param_slots, "slots"_a)
      .def_ro("task_ids", &Function::task_ids, "Stamped by ResolveTaskIds (empty before).")
      .def_ro("returned_params", &Function::returned_params,
              "Stamped by StampReturnedParams: per return value, the parameter it writes back (-1: none).")
      .def("with_returned_params", &Function::with_returned_params, "params"_a)
      .def_prop_ro("group_aic", [](const Function& f) { return f.group_kernels.aic; }, "Stamped by StampGroupKernels.")
      .def_prop_ro("group_aiv", [](const Function& f) { return f.group_kernels.aiv; }, "Stamped by StampGroupKernels.")
      .def(
          "with_group_kernels",
          [](const Function& f, std::string aic, std::string aiv) {
            return f.with_group_kernels(GroupKernels{std::move(aic), std::move(aiv)});
          },
          "aic"_a = std::string(), "aiv"_a = std::string())
      .def_ro("task_statements", &Function::task_statements, "Stamped by CountTaskStatements (0 before).")
      .def("with_task_statements", &Function::with_task_statements, "n"_a)
      .def_ro("batched_creates", &Function::batched_creates, "Stamped by StampAllocationBatches (empty before).")
      .def("with_batched_creates_named", &WithBatchedCreatesNamed, "names"_a,
           "A copy with batched_creates given by name (the parser's batched_creates=).")
      .def_ro("array_backings", &Function::array_backings, "Stamped by StampArrayBackings (empty before).")
      .def("with_array_backings_named", &WithArrayBackingsNamed, "named"_a,
           "A copy with array_backings given by name: [(\"w_1\", \"w\"), ...] (the parser's array_backings=).")
      .def_ro("non_negative_vars", &Function::non_negative_vars, "Stamped by StampNonNegativeVars (empty before).")
      .def("with_non_negative_vars_named", &WithNonNegativeVarsNamed, "names"_a,
           "A copy with non_negative_vars given by name (the parser's non_negative_vars=).")
      .def_ro("call_operands", &Function::call_operands, "Stamped by StampCallOperands (empty before).")
      .def("with_call_operands_named", &WithCallOperandsNamed, "names"_a,
           "A copy with call_operands given by name (the parser's call_operands=).")
      .def_ro("open_calls", &Function::open_calls, "Stamped by StampCallOperands (empty before).")
      .def("with_open_calls_named", &WithOpenCallsNamed, "names"_a,
           "A copy with open_calls given by name (the parser's open_calls=).")
      .def_ro("cut_calls", &Function::cut_calls, "Stamped by StampCallOperands (empty before).")
      .def("with_cut_calls_named", &WithCutCallsNamed, "names"_a,
           "A copy with cut_calls given by name (the parser's cut_calls=).")
      .def_ro("carried_operands", &Function::carried_operands, "Stamped by StampCallOperands (empty before).")
      .def("with_carried_operands_named", &WithCarriedOperandsNamed, "names"_a,
           "A copy with carried_operands given by name (the parser's carried_operands=).")
      .def("with_task_ids_named", &WithTaskIdsNamed, "named"_a,
           "A copy with task_ids given by name: [(\"t\", [slots, fresh, read, at_submit]), ...] (the parser's task_ids=).")
      .def(
          "with_group_sync",
          [](const Function& f, std::vector<int64_t> waits, std::vector<int64_t> signals) {
            return f.with_group_sync(GroupSync{std::move(waits), std::move(signals)});
          },
          "waits"_a = std::vector<int64_t>{}, "signals"_a = std::vector<int64_t>{})
      .def_static(
          "make",
          [](std::string name, FunctionType type, std::vector<VarPtr> params, std::vector<ParamDirection> dirs,
             std::vector<TypePtr> rets, StmtPtr body, Level level, Role role, Attrs attrs, Span span, CoreType core_type) {
            return Function::make(std::move(name), type, std::move(params), std::move(dirs), std::move(rets), std::move(body),
                                  level, role, std::move(attrs), std::move(span))
                ->with_core_type(core_type);
          },
          "name"_a, "type"_a, "params"_a, "dirs"_a, "return_types"_a, "body"_a.none(), "level"_a = Level::None,
          "role"_a = Role::None, "attrs"_a = Attrs{}, "span"_a = Span{}, "core_type"_a = CoreType::Unknown)
      .def("call_result_type", &Function::call_result_type)
      .def("is_kernel", &Function::is_kernel)
      .def("__repr__", [](const Function& f) { return python_print(FunctionPtr(std::shared_ptr<const Function>{}, &f)); });

  nb::class_<Program>(m, "Program")
      .def_ro("name", &Program::name)
      .def_ro("functions", &Program::functions)
      .def_ro("dynamic_dims", &Program::dynamic_dims)
      .def_ro("span", &Program::span)
      .def_static("make", &Program::make, "name"_a, "functions"_a, "dynamic_dims"_a = std::vector<VarPtr>{},
                  "span"_a = Span{})
      .def("get", &Program::get, "name"_a, "The function called `name`, or None.")
      .def("with_function", &Program::with_function, "fn"_a)
      .def("__getattr__",
           [](const Program& p, const std::string& name) {
             FunctionPtr f = p.get(name);
             if (!f) throw nb::attribute_error(("program '" + p.name + "' has no function '" + name + "'").c_str());
             return f;
           })
      .def("__repr__", [](const Program& p) { return python_print(ProgramPtr(std::shared_ptr<const Program>{}, &p)); });
}

void bind_ops(nb::module_& m) {
  nb::class_<OpInfo>(m, "OpInfo")
      .def_ro("name", &OpInfo::name)
      .def_ro("arg_names", &OpInfo::arg_names)
      .def_ro("attr_names", &OpInfo::attr_names)
      .def_ro("doc", &OpInfo::doc)
      .def("infer", [](const OpInfo& op, const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) {
        return op.infer(args, attrs, span);
      }, "args"_a, "attrs"_a = Attrs{}, "span"_a = Span{}, "Run the op's type inference (PyptoError on misuse).");
  m.def("op_names", [] { return OpRegistry::global().names(); }, "Sorted names of all registered ops.");
  m.def(
      "op_info",
      [](const std::string& name) -> const OpInfo* { return OpRegistry::global().get(name); },
      "name"_a, nb::rv_policy::reference, "The OpInfo of op `name`, or None when unknown.");
}

void bind_printer_equality(nb::module_& m) {
  m.def("python_print", nb::overload_cast<const ProgramPtr&>(&python_print), "node"_a);
  m.def("python_print", nb::overload_cast<const FunctionPtr&>(&python_print), "node"_a);
  m.def("python_print", nb::overload_cast<const StmtPtr&>(&python_print), "node"_a);
  m.def("python_print", nb::overload_cast<const ExprPtr&>(&python_print), "node"_a);
  m.def("python_print", nb::overload_cast<const TypePtr&>(&python_print), "node"_a,
        "DSL text of a Program / Function / Stmt / Expr / Type.");

  m.def("structural_equal", nb::overload_cast<const ProgramPtr&, const ProgramPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const FunctionPtr&, const FunctionPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const StmtPtr&, const StmtPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const ExprPtr&, const ExprPtr&>(&structural_equal), "a"_a, "b"_a);
  m.def("structural_equal", nb::overload_cast<const TypePtr&, const TypePtr&>(&structural_equal), "a"_a, "b"_a);
  // Different node categories are never equal.
  m.def("structural_equal", [](nb::handle, nb::handle) { return false; }, "a"_a.none(), "b"_a.none());

  m.def(
      "structural_equal_explain",
      [](const ProgramPtr& a, const ProgramPtr& b) {
        std::string why;
        bool eq = structural_equal_explain(a, b, &why);
        return std::make_pair(eq, why);
      },
      "a"_a, "b"_a, "(equal, why): `why` names the first difference when the programs differ.");

  m.def("structural_hash", nb::overload_cast<const ProgramPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const FunctionPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const StmtPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const ExprPtr&>(&structural_hash), "node"_a);
  m.def("structural_hash", nb::overload_cast<const TypePtr&>(&structural_hash), "node"_a);
}

}  // namespace

void bind_ir(nb::module_& parent) {
  nb::register_exception_translator(&translate_errors);
  nb::module_ m = parent.def_submodule("ir", "The pypto IR (C++), see include/pypto/ir.");
  bind_enums(m);
  bind_span(m);
  bind_ast_spans(m);
  bind_call_runs(m);
  bind_errors(m);
  bind_types(m);
  bind_exprs(m);
  bind_stmts(m);
  bind_function_program(m);
  bind_ops(m);
  bind_printer_equality(m);
}

}  // namespace pypto::bindings
