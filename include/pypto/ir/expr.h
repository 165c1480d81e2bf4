// Expressions.
//
// Semantics: expressions are pure except Call/Submit, which are evaluated exactly once, in
// statement order, where the enclosing statement stands. Identity of a variable is the Var
// pointer (never its name: `name` is a hint for printing and may repeat). Every node has a
// type (`type`, never null) and a span. Nodes are immutable; build them with `make`, which
// checks invariants and throws InternalError on a broken one. Rewriters build new nodes.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pypto/ir/attrs.h"
#include "pypto/ir/enums.h"
#include "pypto/ir/span.h"
#include "pypto/ir/type.h"

namespace pypto::ir {

enum class NodeKind : uint8_t {
#define PYPTO_EXPR_NODE(Name) Name,
#define PYPTO_STMT_NODE(Name) Name,
#include "pypto/ir/node_kinds.def"
};
const char* to_string(NodeKind k);

struct Node {
  const NodeKind kind;
  Span span;
  Node(NodeKind k, Span s) : kind(k), span(std::move(s)) {}
  virtual ~Node() = default;
  template <class T> const T* as() const { return kind == T::kKind ? static_cast<const T*>(this) : nullptr; }
  template <class T> bool is() const { return kind == T::kKind; }
};

// Freeing a node frees its children without recursing (node_release.cpp): a node's destructor
// hands its child pointers to release_children, and the outermost release on the thread frees
// them from a loop. A tree of any depth (200,000 nested BinaryExprs built from Python) is freed
// with a bounded stack; a child still owned elsewhere just loses one reference.
//   ~BinaryExpr() override { release_children(a, b); }
namespace detail {
void DeferRelease(std::shared_ptr<const Node> node);
template <class T>
void DeferRelease(std::vector<std::shared_ptr<const T>>&& nodes) {
  for (auto& n : nodes) DeferRelease(std::shared_ptr<const Node>(std::move(n)));
}
}  // namespace detail
template <class... Children>
void release_children(Children&... children) {
  (detail::DeferRelease(std::move(children)), ...);
}

struct Expr : Node {
  TypePtr type;
  Expr(NodeKind k, TypePtr t, Span s) : Node(k, std::move(s)), type(std::move(t)) {}
};

// A variable: function parameter, loop variable, assignment target, dynamic-dim symbol.
struct Var : Expr {
  static constexpr NodeKind kKind = NodeKind::Var;
  std::string name;
  Var(std::string n, TypePtr t, Span s, NodeKind k = kKind) : Expr(k, std::move(t), std::move(s)), name(std::move(n)) {}
  static std::shared_ptr<const Var> make(std::string name, TypePtr type, Span span = {});
};
using VarPtr = std::shared_ptr<const Var>;

// A loop-carried variable of a ForStmt: holds `init` on the first iteration and the
// previous iteration's yielded value afterwards. It is a Var (usable wherever one is).
struct IterArg : Var {
  static constexpr NodeKind kKind = NodeKind::IterArg;
  ExprPtr init;
  IterArg(std::string n, TypePtr t, ExprPtr i, Span s) : Var(std::move(n), std::move(t), std::move(s), kKind), init(std::move(i)) {}
  ~IterArg() override { release_children(init); }
  static std::shared_ptr<const IterArg> make(std::string name, TypePtr type, ExprPtr init, Span span = {});
};
using IterArgPtr = std::shared_ptr<const IterArg>;

// Var::as<Var>() is false for an IterArg (kinds differ); use as_var() to accept both.
inline const Var* as_var(const ExprPtr& e) {
  if (!e) return nullptr;
  if (e->kind == NodeKind::Var || e->kind == NodeKind::IterArg) return static_cast<const Var*>(e.get());
  return nullptr;
}
inline VarPtr as_var_ptr(const ExprPtr& e) { return as_var(e) ? std::static_pointer_cast<const Var>(e) : nullptr; }

struct ConstInt : Expr {
  static constexpr NodeKind kKind = NodeKind::ConstInt;
  int64_t value;
  ConstInt(int64_t v, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), value(v) {}
  static std::shared_ptr<const ConstInt> make(int64_t v, DataType dtype = DataType::INDEX, Span span = {});
};

struct ConstFloat : Expr {
  static constexpr NodeKind kKind = NodeKind::ConstFloat;
  double value;
  ConstFloat(double v, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), value(v) {}
  static std::shared_ptr<const ConstFloat> make(double v, DataType dtype = DataType::FP32, Span span = {});
};

struct ConstBool : Expr {
  static constexpr NodeKind kKind = NodeKind::ConstBool;
  bool value;
  ConstBool(bool v, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), value(v) {}
  static std::shared_ptr<const ConstBool> make(bool v, Span span = {});
};

// The dtype two scalar operands meet at (the usual arithmetic promotion): float wins, among
// ints the wider, at equal width the signed; INDEX with any int gives INDEX, BOOL with an int
// the int, and two BOOLs INDEX. Arithmetic computes in it, and comparisons compare in it:
//   PromoteScalarDTypes(DataType::INT8, DataType::UINT8) == DataType::INT8
DataType PromoteScalarDTypes(DataType a, DataType b);

// Scalar arithmetic / comparison / logic. Operands are scalar-typed; the result type is
// inferred by `make` (comparisons and logic -> BOOL; arithmetic -> the wider operand type,
// float if either is float; Div of two ints -> FP32). Throws UserError on a non-scalar operand.
struct BinaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::BinaryExpr;
  BinaryOp op;
  ExprPtr a, b;
  BinaryExpr(BinaryOp o, ExprPtr x, ExprPtr y, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)), b(std::move(y)) {}
  ~BinaryExpr() override { release_children(a, b); }
  static std::shared_ptr<const BinaryExpr> make(BinaryOp op, ExprPtr a, ExprPtr b, Span span = {});
};

struct UnaryExpr : Expr {
  static constexpr NodeKind kKind = NodeKind::UnaryExpr;
  UnaryOp op;
  ExprPtr a;
  UnaryExpr(UnaryOp o, ExprPtr x, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), op(o), a(std::move(x)) {}
  ~UnaryExpr() override { release_children(a); }
  static std::shared_ptr<const UnaryExpr> make(UnaryOp op, ExprPtr a, Span span = {});
};

// Scalar conversion: pl.cast(x, pl.INT64) on a scalar (tile casts are the op "tile.cast").
struct Cast : Expr {
  static constexpr NodeKind kKind = NodeKind::Cast;
  ExprPtr value;
  Cast(ExprPtr v, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), value(std::move(v)) {}
  ~Cast() override { release_children(value); }
  static std::shared_ptr<const Cast> make(ExprPtr value, DataType dtype, Span span = {});
};

// What a system.task_ref placeholder names (AutoDeriveTaskDependencies writes it,
// PrepareCrossScopeTaskIdHoists reads it): printed as the op's keywords
// `pl.system.task_ref([loop_var,] every_iteration=True, slot=k, task="k_tid3")`.
struct TaskRef {
  std::string task;               // the TaskId Var (by name) bound to the producer's submit; "" on other calls
  int64_t slot = -1;              // k >= 0: only iteration k's id of the pl.parallel below the common scope
  bool every_iteration = false;   // the ids of every iteration of the pl.range below the common scope
  bool operator==(const TaskRef& o) const { return task == o.task && slot == o.slot && every_iteration == o.every_iteration; }
  bool operator!=(const TaskRef& o) const { return !(*this == o); }
};

// A call, either to a registered op (`is_op`, callee like "tensor.create", "tile.add") or to
// another function of the program (callee = its name; `self.kernel(...)` in the DSL).
// `arg_directions` is empty or has one entry per arg (see ArgDirection).
struct Call : Expr {
  static constexpr NodeKind kKind = NodeKind::Call;
  std::string callee;
  bool is_op;
  std::vector<ExprPtr> args;
  Attrs attrs;
  std::vector<ArgDirection> arg_directions;
  // TaskId Vars this task must follow, derived by AutoDeriveTaskDependencies (never written
  // by the user: user edges are Submit::deps). Printed as `compiler_manual_dep_edges=[...]`.
  std::vector<ExprPtr> compiler_manual_dep_edges;
  // Tensor arguments marked for the runtime's partial dump (pl.dump_tag; anchor §6), each an
  // expression that is also in `args`. Printed as `attrs={"dump_vars": [...]}`.
  std::vector<ExprPtr> dump_vars;
  // The user's TaskId edges of a system.task_dummy barrier (`pl.system.task_dummy(deps=[t1, t2])`);
  // empty on every other call. make_op takes them as the op's "manual_dep_edges" parameter and
  // stores them here, not in attrs.
  std::vector<ExprPtr> manual_dep_edges;
  // Pass result (KernelShareTileMoves; typed, printed as `pl.move(t, ..., shares_source_tile=True)`):
  // this tile.move is a no-op on the CPU and its result shares the source tile's storage.
  bool shares_source_tile = false;
  // Pass result (KernelInPlaceMatmulLoads; typed, printed as `pl.load(a, ..., reads_in_place=True)`):
  // only a matmul reads this tile.load's tile and nothing writes a tensor before it does, so on
  // the CPU the matmul reads the box where it lies in the tensor instead of a copy.
  bool reads_in_place = false;
  // Pass result (ResolvePeerBufferBases; typed, printed as `pl.system.reserve_buffer(..., cpu_base=256)`):
  // the address a system.reserve_buffer / system.import_peer_buffer binds on the CPU (its base, or
  // its peer's; 0 for pl.AUTO). -1 before the pass and on every other call.
  int64_t cpu_base = -1;
  // Pass result (ResolvePeerBufferBases; typed, printed first, as the op's keyword
  // `pl.system.import_peer_buffer(base=256, name="ring", peer_func="consumer")`): the base of the
  // peer's reservation a system.import_peer_buffer binds (>= 0, or -1 for pl.AUTO).
  // kNoPeerBase before the pass and on every other call.
  static constexpr int64_t kNoPeerBase = -2;
  int64_t peer_base = kNoPeerBase;
  // The target of a system.task_ref placeholder (TaskRef); make_op takes it as the op's task= /
  // slot= / every_iteration= parameters and stores it here, not in attrs.
  TaskRef task_ref;
  Call(std::string c, bool op, std::vector<ExprPtr> a, Attrs at, std::vector<ArgDirection> d, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), callee(std::move(c)), is_op(op), args(std::move(a)), attrs(std::move(at)), arg_directions(std::move(d)) {}
  ~Call() override { release_children(args, compiler_manual_dep_edges, dump_vars, manual_dep_edges); }
  // Op call: the result type comes from the op registry's type inference (UserError on misuse).
  static std::shared_ptr<const Call> make_op(std::string op, std::vector<ExprPtr> args, Attrs attrs = {}, Span span = {});
  // Function call: the caller supplies the result type (the callee's return type: a single
  // type, or a TupleType for several returns, or the unit tuple for none).
  static std::shared_ptr<const Call> make_func(std::string callee, std::vector<ExprPtr> args, TypePtr result,
                                               std::vector<ArgDirection> dirs = {}, Span span = {}, Attrs attrs = {});
};
using CallPtr = std::shared_ptr<const Call>;

// A task submission (pl.submit / pl.spmd_submit, or an outlined pl.at / pl.spmd scope).
// Its type is TupleType([*callee return types, Scalar[TASK_ID]]): element N is the TaskId.
//   deps                 TaskId-typed exprs (Scalar[TASK_ID] or Array[N, TASK_ID] vars);
//                        `None` entries were dropped by the parser
//   core_num             null = single block; else a positive integer expr (SPMD launch)
//   sync_start           all blocks start at once
//   allow_early_resolve  speculative early-dispatch producer
//   timing_slot          -1 = none; else 0..15
//   predicate            null, or `Cmp(Cast(tensor.read(t, [idx...]), INT64), ConstInt)` in
//                        either operand order (see manual dependency spec); never evaluated
//                        by orchestration
struct Submit : Expr {
  static constexpr NodeKind kKind = NodeKind::Submit;
  std::string callee;
  std::vector<ExprPtr> args;
  std::vector<ArgDirection> arg_directions;
  std::vector<ExprPtr> deps;
  ExprPtr core_num;
  bool sync_start = false;
  bool allow_early_resolve = false;
  int timing_slot = -1;
  ExprPtr predicate;
  // Compiler-derived TaskId edges (AutoDeriveTaskDependencies), merged after `deps`.
  std::vector<ExprPtr> compiler_manual_dep_edges;
  // Tensor arguments marked for the runtime's partial dump (`dumps=[...]` or pl.dump_tag).
  std::vector<ExprPtr> dump_vars;
  Submit(std::string c, std::vector<ExprPtr> a, std::vector<ArgDirection> d, std::vector<ExprPtr> deps_, ExprPtr cn,
         bool ss, bool aer, int ts, ExprPtr pred, TypePtr t, Span s)
      : Expr(kKind, std::move(t), std::move(s)), callee(std::move(c)), args(std::move(a)), arg_directions(std::move(d)),
        deps(std::move(deps_)), core_num(std::move(cn)), sync_start(ss), allow_early_resolve(aer), timing_slot(ts),
        predicate(std::move(pred)) {}
  ~Submit() override { release_children(args, deps, core_num, predicate, compiler_manual_dep_edges, dump_vars); }
  // `callee_returns` are the callee's return types; the TaskId element is appended here.
  static std::shared_ptr<const Submit> make(std::string callee, std::vector<ExprPtr> args, std::vector<TypePtr> callee_returns,
                                            std::vector<ExprPtr> deps = {}, ExprPtr core_num = nullptr, bool sync_start = false,
                                            bool allow_early_resolve = false, int timing_slot = -1, ExprPtr predicate = nullptr,
                                            std::vector<ArgDirection> dirs = {}, Span span = {});
};
using SubmitPtr = std::shared_ptr<const Submit>;

// A copy of Call / Submit `task` with compiler_manual_dep_edges = `edges` (each a TaskId).
//   ExprPtr c2 = with_compiler_dep_edges(call, {tid_a, tid_b});
ExprPtr with_compiler_dep_edges(const ExprPtr& task, std::vector<ExprPtr> edges);
// A copy of op call `call` (a tile.move) with shares_source_tile = `shares` (KernelShareTileMoves).
//   ExprPtr m2 = with_shares_source_tile(move, true);   // printed: pl.move(t, ..., shares_source_tile=True)
ExprPtr with_shares_source_tile(const ExprPtr& call, bool shares);
// A copy of op call `call` (a tile.load) with reads_in_place = `in_place` (KernelInPlaceMatmulLoads).
//   ExprPtr l2 = with_reads_in_place(load, true);   // printed: pl.load(a, ..., reads_in_place=True)
ExprPtr with_reads_in_place(const ExprPtr& call, bool in_place);
// A copy of op call `call` (a system.reserve_buffer / system.import_peer_buffer) with
// cpu_base = `cpu_base` (>= 0, or -1 for unstamped) (ResolvePeerBufferBases).
//   ExprPtr r2 = with_cpu_base(reserve, 256);   // printed: pl.system.reserve_buffer(..., cpu_base=256)
ExprPtr with_cpu_base(const ExprPtr& call, int64_t cpu_base);
// A copy of op call `call` (a system.import_peer_buffer) with peer_base = `base` (>= 0, -1 for
// pl.AUTO, or Call::kNoPeerBase for unstamped) (ResolvePeerBufferBases).
//   ExprPtr i2 = with_peer_base(import, 256);   // printed: pl.system.import_peer_buffer(base=256, ...)
ExprPtr with_peer_base(const ExprPtr& call, int64_t base);
// A copy of op call `call` with the typed pass results of op call `from` (shares_source_tile,
// reads_in_place, cpu_base, peer_base): what a pass that rebuilds a call from its callee, args and attrs calls,
// so no typed field is dropped by a rebuild (a new typed pass result is added here).
//   ExprPtr c2 = with_pass_results_of(Call::make_op(op->callee, args, op->attrs, sp), *op);
ExprPtr with_pass_results_of(const ExprPtr& call, const Call& from);
// The compiler edges of a Call or Submit (empty for any other node).
const std::vector<ExprPtr>& compiler_dep_edges(const Expr& task);
// A copy of Call / Submit `task` with dump_vars = `vars` (tensor arguments of the task, deduplicated
// in argument order; anchor §6). UserError for a scalar or a non-argument.
//   ExprPtr s2 = with_dump_vars(submit, {x});   // printed: pl.submit(self.k, x, dumps=[x])
ExprPtr with_dump_vars(const ExprPtr& task, const std::vector<ExprPtr>& vars);
// The dump marks of a Call or Submit (empty for any other node).
const std::vector<ExprPtr>& dump_vars(const Expr& task);

struct MakeTuple : Expr {
  static constexpr NodeKind kKind = NodeKind::MakeTuple;
  std::vector<ExprPtr> elements;
  MakeTuple(std::vector<ExprPtr> e, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), elements(std::move(e)) {}
  ~MakeTuple() override { release_children(elements); }
  static std::shared_ptr<const MakeTuple> make(std::vector<ExprPtr> elements, Span span = {});
};

struct TupleGetItem : Expr {
  static constexpr NodeKind kKind = NodeKind::TupleGetItem;
  ExprPtr tuple;
  int index;
  TupleGetItem(ExprPtr tu, int i, TypePtr t, Span s) : Expr(kKind, std::move(t), std::move(s)), tuple(std::move(tu)), index(i) {}
  ~TupleGetItem() override { release_children(tuple); }
  static std::shared_ptr<const TupleGetItem> make(ExprPtr tuple, int index, Span span = {});
};

}  // namespace pypto::ir
