// ConvertTensorToTileOps
//
// What: in every kernel function (InCore / AIC / AIV; a CORE_GROUP pl.at or pl.spmd body has
//   been outlined into one by now), lowers the tensor-level ops of spec anchor_features §9 to
//   tile ops, so the CPU kernel backend only ever sees tiles:
//     tensor.<op>(a, b, ...)               -> tile.<op>(A, B, ...)   every mirrored compute op
//                                             (tensor_compute_ops.cpp); a tensor operand that is
//                                             still a global tensor is loaded whole:
//                                             A = tile.load(a, [0, ..], a.shape)
//                                             (so tensor.scatter(g, ..) scatters into a loaded
//                                             copy: assemble or return the result to store it)
//     tensor.gather_row(d, g, ..)          -> tile.gather_row(D, g, ..)   src g stays a tensor
//     tensor.batch_matmul(a, b)            -> tile.batch_matmul(A, B)     (reference_ops.md §11) a rank-3/4
//     tensor.matmul_acc(c, a, b), rank > 2 -> tile.batch_matmul_acc(C, A, B)  operand is loaded by a loop
//                                             hoisted before the statement, one [M, K] batch matrix per
//                                             iteration (LoadBatched); static shapes only. A rank
//                                             > 2 tensor.slice of g stays a view (its statement
//                                             dropped) that the loop loads at the slice's offsets;
//                                             a 1-D / 2-D slice of it loads from g at the composed
//                                             offsets; any other use of it is refused (located)
//     tensor.slice(g, shapes, offsets)     -> tile.load(g, offsets, shapes)      g global
//     tensor.slice(g, shapes, offsets, v)  -> tile.load(g, offsets, shapes, v)   valid box v (§10)
//     tensor.slice(t, shapes, offsets)     -> tile.slice(t, shapes, offsets)     t a tile
//     tensor.assemble(g, v, offsets)       -> tile.store(V, offsets, g)          g global
//     tensor.assemble(t, v, offsets)       -> tile.assemble(t, V, offsets)       t a tile
//     tensor.reshape(x, shape)             -> tile.reshape(X, shape)
//     tensor.create(shape) [init_value=v]  -> tile.full(shape, v or 0)   (Refine: R leaves the
//                                             contents unspecified; we fill, honouring init_value)
//     tensor.read(t, idx)                  -> tile.read(t, idx)                  t a tile
//     tensor.read(g, idx)                  -> tile.read(tile.load(g, idx, [1, ..]), [0, ..])   g global
//     tensor.write(t, idx, v)              -> tile.write(t, idx, v)              t a tile (g: kept, §11)
//     tensor.transpose(t, a1, a2)          -> tile.transpose(T, a1, a2)          a 2-D value (g loaded whole)
//   A value whose type changes from Tensor to Tile gets a fresh Var (IRMutator), so later uses
//   follow.
//       c = pl.assemble(c, pl.add(a, b), [0, 0])   ==>   c = pl.store(pl.add(pl.load(a, ..), pl.load(b, ..)), [0, 0], c)
//   A loop carry / if result whose value became a tile is a tile (a tensor init or the other
//   branch's tensor is loaded whole); so is one that may be either of two tensors
//   (`t = a if c else b`, a carry swapped with another), when only tensor ops read such values
//   (a tile op's tensor operand keeps them tensors: the verifier refuses a carry or branch that
//   changes parameter; a write into one is a located error here); a loop whose body turns a tensor carry into a tile is
//   converted once more with that carry a tile (at most d^2 / 2 loop conversions for a nest of
//   depth d; a carry already a tile never asks). A returned value that became a tile (rule 5 of §9) gets a
//   new trailing pl.Out parameter `ret<k>_out` of the declared return type and an exit store:
//       r = pl.matmul(a, b); return r   ==>   ret0_out_1 = pl.store(r, [0, 0], ret0_out); return ret0_out_1
//   and every caller passes a new tensor for it (ThreadReturnOutParams, return_out_params.cpp):
//   an Orchestration / Opaque caller a `tensor.create` before the call, a wrapper (Group)
//   function a new Out parameter of its own that it forwards.
// Input invariants: outlining ran (OutlineIncoreScopes); the frontend admitted tensor compute
//   ops only in kernels and CORE_GROUP / pl.spmd bodies.
// Output invariants: no kernel calls a tensor.* op of the list above; no kernel returns a tile.
// Errors (located): a write into a value that may be either of two tensor parameters; a
//   returned tile whose declared return type is not a tensor; a transpose of
//   a value that is not 2-D; a read of a parameter of rank above 2; a write or assemble into a
//   transposed parameter (the kernel's transpose is a local copy); a gather_row whose src is a
//   value computed in the kernel (the tile op reads src from a tensor).
// Why: the reference DSL lets kernels and pl.at bodies be written on whole tensors; the CPU
//   kernel backend, like the reference's, computes on tiles.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"
#include "pypto/ir/visitor.h"
#include "pypto/transforms/passes.h"
#include "../ir/describe.h"
#include "buffer_roots.h"
#include "return_out_params.h"
#include "scope_outlining.h"

namespace pypto::ir::ops {
const std::vector<std::string>& tensor_compute_op_names();
bool tensor_op_keeps_tensor(const std::string& name, size_t index);
bool is_batched_matmul_acc(const std::vector<ExprPtr>& args);
}

namespace pypto::transforms {

using namespace ir;

namespace {

bool is_tensor(const ExprPtr& e) { return e && e->type->is<TensorType>(); }
bool is_tile(const ExprPtr& e) { return e && e->type->is<TileType>(); }

// The whole of global tensor `g` as a Vec tile.
ExprPtr load_whole(const ExprPtr& g, const Span& span) {
  auto* t = g->type->as<TensorType>();
  std::vector<ExprPtr> zeros(t->shape.size(), ConstInt::make(0, DataType::INDEX, span));
  return Call::make_op("tile.load", {g, MakeTuple::make(zeros, span), MakeTuple::make(t->shape, span)}, {}, span);
}

ExprPtr as_tile(const ExprPtr& e, const Span& span) { return is_tensor(e) ? load_whole(e, span) : e; }

// Does `fn` need a value that may be one of several tensors as a tensor: the target of a write
// (tile.store, tensor.assemble, tensor.write, tile.mscatter), an operand of a tile op (which
// reads the tensor itself), or a tensor op's operand that stays a tensor (gather_row's src)?
// A write into a value that may be any of several tensor parameters (`c = a if n > 1 else b`,
// then `pl.assemble(c, ...)`) is refused here, located: the write must go to one tensor.
bool NeedsAmbiguousTensor(const Function& fn, const BufferRoots& roots) {
  struct Finder : IRVisitor {
    const Function& fn;
    const BufferRoots& roots;
    bool found = false;
    Finder(const Function& f, const BufferRoots& r) : fn(f), roots(r) {}
    bool is_param(const Var* v) const {
      return std::any_of(fn.params.begin(), fn.params.end(), [&](const VarPtr& p) { return p.get() == v; });
    }
    void visit_(const Call* op) override {
      const int w = op->is_op ? WrittenTensorArg(op->callee) : -1;
      for (size_t k = 0; op->is_op && k < op->args.size(); ++k) {
        const RootSet& r = roots.of(op->args[k]);
        if (r.size() < 2) continue;
        const bool tensor_op = op->callee.rfind("tensor.", 0) == 0;
        if (!tensor_op || static_cast<int>(k) == w || ops::tensor_op_keeps_tensor(op->callee.substr(7), k)) {
          found = true;
        }
        if (static_cast<int>(k) == w && std::all_of(r.begin(), r.end(), [&](const Var* v) { return is_param(v); })) {
          std::string names;
          for (const Var* v : r) names += (names.empty() ? "'" : " or '") + v->name + "'";
          const Var* target = as_var(op->args[k]);
          throw UserError(op->callee + " writes into " + (target ? "'" + target->name + "'" : std::string("a value")) +
                              ", which may be " + names + " (a branch or a loop chose it): a write must go to one tensor",
                          op->span, "write into each tensor in its own branch, or build the value in a new tensor "
                                    "(pl.create_tensor) and write that");
        }
      }
      IRVisitor::visit_(op);
    }
  } finder(fn, roots);
  finder.visit_stmt(fn.body);
  return finder.found;
}

class Converter : public IRMutator {
 public:
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    if (!op->is_op || op->callee.rfind("tensor.", 0) != 0) return IRMutator::mutate_(op, self);
    // Operands first, without rebuilding the tensor call: an operand may already be a tile.
    bool changed = false;
    std::vector<ExprPtr> args = mutate_exprs(op->args, &changed);
    const std::string name = op->callee.substr(7);
    const Span& sp = op->span;
    if ((name == "write" || name == "assemble") && !args.empty() && transposed_globals_.count(args[0].get())) {
      throw UserError("pl.tensor." + name + " into a transposed kernel parameter: inside a kernel the transpose is a "
                      "local copy, so the write would not reach the tensor",
                      sp, "write into the parameter itself at transposed offsets, or transpose in the orchestration");
    }
    // Batched products (reference_ops.md §11): tensor.batch_matmul, and tensor.matmul_acc with an operand
    // of rank > 2, become tile.batch_matmul / tile.batch_matmul_acc (one matmul per batch index) on
    // operands loaded batch matrix by batch matrix.
    if (name == "batch_matmul" || (name == "matmul_acc" && ops::is_batched_matmul_acc(op->args))) {
      std::vector<ExprPtr> tiles;
      for (const ExprPtr& a : args) tiles.push_back(is_tensor(a) ? LoadBatched(a, name, sp) : a);
      return Call::make_op(name == "batch_matmul" ? "tile.batch_matmul" : "tile.batch_matmul_acc", tiles, {}, sp);
    }
    for (size_t k = name == "slice" ? 1 : 0; k < args.size(); ++k) RefuseBatchView(args[k], sp);
    const auto& compute = ops::tensor_compute_op_names();
    if (std::find(compute.begin(), compute.end(), name) != compute.end()) {
      std::vector<ExprPtr> tiles;
      for (size_t k = 0; k < args.size(); ++k) {
        if (ops::tensor_op_keeps_tensor(name, k)) {
          PYPTO_USER_CHECK(is_tensor(args[k]), sp,
                           "pl.tensor." << name << " reads its operand " << k
                                        << " from a tensor, but inside the kernel it is a computed (tile) value",
                           "pass a tensor parameter of the kernel (or a pl.slice of one), or copy the block with "
                           "pl.slice and pl.assemble");
          tiles.push_back(args[k]);
        } else {
          tiles.push_back(as_tile(args[k], sp));
        }
      }
      return Call::make_op("tile." + name, tiles, op->attrs, sp);
    }
    // A valid_shape (4th argument) becomes the valid box of the load / window (§10).
    if (name == "slice" && (args.size() == 3 || args.size() == 4)) {
      if (is_tile(args[0])) {
        PYPTO_USER_CHECK(!op->attrs.count("drop_dims"), sp,
                         "pl.tensor.slice(..., drop_dims=) of a kernel-local value is not supported",
                         "slice it without drop_dims (kernel tiles are 2-D), or slice the kernel's tensor parameter");
        std::vector<ExprPtr> a = {args[0], args[1], args[2]};
        if (args.size() == 4) a.push_back(args[3]);
        Attrs slice_attrs;   // keeps pad_value (a kernel tile window is 2-D: drop_dims was checked, nothing to drop)
        if (op->attrs.count("pad_value")) slice_attrs["pad_value"] = op->attrs.at("pad_value");
        return Call::make_op("tile.slice", a, slice_attrs, sp);
      }
      if (IsBatchView(args, op->attrs)) {   // rank > 2: a view only a batched product's operand loads
        return changed ? with_pass_results_of(Call::make_op(op->callee, args, op->attrs, sp), *op) : self;
      }
      if (auto* v = as_var(args[0]); v && batch_views_.count(v)) return LoadFromView(args, op->attrs, sp);
      const size_t rank = op->type->is<TensorType>() ? op->type->as<TensorType>()->shape.size() : 0;
      PYPTO_USER_CHECK(rank <= 2, sp,
                       "pl.tensor.slice of rank " << rank << " with valid_shape= or pad_value= inside a kernel: "
                                                     "kernel tiles are 1-D or 2-D",
                       "slice 2-D blocks (drop_dims= the axes of extent 1); a rank-3/4 slice without them can be an "
                       "operand of pl.batch_matmul or pl.matmul_acc");
      std::vector<ExprPtr> a = {args[0], args[2], args[1]};
      if (args.size() == 4) a.push_back(args[3]);
      Attrs load_attrs;   // drop_dims and pad_value (the value outside the valid box) carry over
      if (op->attrs.count("drop_dims")) load_attrs["drop_dims"] = op->attrs.at("drop_dims");
      if (op->attrs.count("pad_value")) load_attrs["pad_value"] = op->attrs.at("pad_value");
      return Call::make_op("tile.load", a, load_attrs, sp);
    }
    if (name == "assemble" && args.size() == 3) {
      ExprPtr value = as_tile(args[1], sp);
      if (is_tile(args[0])) return Call::make_op("tile.assemble", {args[0], value, args[2]}, {}, sp);
      return Call::make_op("tile.store", {value, args[2], args[0]}, {}, sp);
    }
    if (name == "reshape" && args.size() == 2) {
      return Call::make_op("tile.reshape", {as_tile(args[0], sp), args[1]}, {}, sp);
    }
    // Element access and transposition of a kernel-local value (already a tile). A write into a
    // global tensor keeps its tensor form (the kernel's checked scalar store, §11); a read of one
    // loads the 1-element box at the index; a transpose of one loads it whole.
    if (name == "read" && args.size() == 2) {
      if (is_tile(args[0])) return Call::make_op("tile.read", {args[0], args[1]}, {}, sp);
      auto* idx = args[1]->as<MakeTuple>();
      const size_t rank = args[0]->type->as<TensorType>()->shape.size();
      PYPTO_USER_CHECK(rank >= 1 && rank <= 2 && idx, sp,
                       "pl.tensor.read of a kernel parameter needs a 1-D or 2-D tensor, got rank " << rank,
                       "read the element in the orchestration and pass it as a pl.Scalar argument");
      std::vector<ExprPtr> ones(rank, ConstInt::make(1, DataType::INDEX, sp));
      std::vector<ExprPtr> zeros(rank, ConstInt::make(0, DataType::INDEX, sp));
      ExprPtr box = Call::make_op("tile.load", {args[0], args[1], MakeTuple::make(ones, sp)}, {}, sp);
      return Call::make_op("tile.read", {box, MakeTuple::make(zeros, sp)}, {}, sp);
    }
    if (name == "write" && args.size() == 3 && is_tile(args[0])) {
      return Call::make_op("tile.write", {args[0], args[1], args[2]}, {}, sp);
    }
    if (name == "transpose" && args.size() == 3) {
      const bool global = is_tensor(args[0]);
      ExprPtr value = as_tile(args[0], sp);
      const size_t rank = value->type->as<TileType>()->shape.size();
      PYPTO_USER_CHECK(rank == 2, sp,
                       "pl.tensor.transpose inside a kernel needs a 2-D value, got rank " << rank,
                       "reshape it to 2-D first (pl.reshape), or transpose the global tensor in the orchestration");
      ExprPtr t = Call::make_op("tile.transpose", {value, args[1], args[2]}, {}, sp);
      if (global) transposed_globals_.insert(t.get());
      return t;
    }
    if (name == "create" && !args.empty()) {
      auto* tt = op->type->as<TensorType>();
      const double* init = attr_get<double>(op->attrs, "init_value");
      double v = init ? *init : 0.0;
      ExprPtr value = is_float(tt->dtype) ? ExprPtr(ConstFloat::make(v, tt->dtype, sp))
                                          : ExprPtr(ConstInt::make(static_cast<int64_t>(v), tt->dtype, sp));
      Attrs attrs{{"dtype", std::string(to_string(tt->dtype))}};
      return Call::make_op("tile.full", {args[0], value}, attrs, sp);
    }
    // Rebuilt from callee / args / attrs: the typed pass results go along.
    return changed ? with_pass_results_of(Call::make_op(op->callee, args, op->attrs, sp), *op) : self;
  }

  // Statements a converted expression needs first (a batched operand's load loop) go right before
  // the statement that holds the expression; a nested statement collects its own.
  StmtPtr mutate_stmt(const StmtPtr& s) override {
    std::vector<StmtPtr> outer = std::move(hoisted_);
    hoisted_.clear();
    StmtPtr r = IRMutator::mutate_stmt(s);
    if (!hoisted_.empty()) {
      hoisted_.push_back(r);
      r = make_seq(std::move(hoisted_), s->span);
    }
    hoisted_ = std::move(outer);
    return r;
  }

  // A transposed kernel parameter bound to a name stays marked: writing into it is refused.
  StmtPtr mutate_(const AssignStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* a = s->as<AssignStmt>();
    if (a && transposed_globals_.count(a->value.get())) transposed_globals_.insert(a->var.get());
    auto* c = a ? a->value->as<Call>() : nullptr;
    if (c && c->is_op && c->callee == "tensor.slice" && c->type->is<TensorType>() && c->args.size() == 3 &&
        c->type->as<TensorType>()->shape.size() > 2) {
      batch_views_[a->var.get()] = {a->value, a->var, op->span};   // the statement goes: its uses load the view
      return make_seq({}, op->span);
    }
    return s;
  }

  // The kernel being converted (its declared return types name the rule-5 parameters).
  Converter(const Program& program, const Function& fn)
      : fn_(fn), roots_(program, fn, /*views_are_roots=*/true),
        reads_ambiguous_only_(!NeedsAmbiguousTensor(fn, roots_)) {}

  // Rule 5: a returned tile is stored into a new trailing Out parameter `ret<k>_out`.
  StmtPtr mutate_(const ReturnStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    std::vector<ExprPtr> values = s->as<ReturnStmt>()->values;
    std::vector<StmtPtr> out;
    for (size_t k = 0; k < values.size(); ++k) {
      if (!is_tile(values[k])) continue;
      const TypePtr declared = k < fn_.return_types.size() ? fn_.return_types[k] : nullptr;
      PYPTO_USER_CHECK(declared && declared->is<TensorType>(), op->span,
                       "kernel '" << fn_.name << "' returns a tile where its return type is not a tensor",
                       "declare the return type as pl.Tensor[...]");
      VarPtr& param = ret_params_[k];
      if (!param) param = Var::make(FreshParamName("ret" + std::to_string(k) + "_out"), declared, op->span);
      auto* tt = declared->as<TensorType>();
      std::vector<ExprPtr> zeros(tt->shape.size(), ConstInt::make(0, DataType::INDEX, op->span));
      ExprPtr store = Call::make_op("tile.store", {values[k], MakeTuple::make(zeros, op->span), param}, {}, op->span);
      VarPtr stored = Var::make(param->name + "_1", store->type, op->span);
      out.push_back(AssignStmt::make(stored, store, op->span));
      values[k] = stored;
    }
    if (out.empty()) return s;
    out.push_back(ReturnStmt::make(values, op->span));
    return make_seq(out, op->span);
  }

  // A carry whose init or yielded value became a tile is a tile; the loop is converted again
  // (from the same state) when the body turns a tensor carry into a tile.
  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    std::set<size_t> force;
    const size_t hoisted = hoisted_.size();   // an iter_arg init may hoist statements: not twice
    for (;;) {
      auto saved = var_remap_;
      std::set<size_t> needs;
      StmtPtr s = ConvertLoop(op, self, force, &needs);
      if (std::includes(force.begin(), force.end(), needs.begin(), needs.end())) return s;
      force.insert(needs.begin(), needs.end());
      var_remap_ = saved;
      hoisted_.resize(hoisted);
    }
  }

  // An if result is a tile when either branch yields a tile; the other branch's tensor is loaded.
  StmtPtr mutate_(const IfStmt* op, const StmtPtr& self) override {
    ExprPtr cond = mutate_expr(op->cond);
    yields_.push_back({});
    StmtPtr then_body = mutate_stmt(op->then_body);
    StmtPtr else_body = op->else_body ? mutate_stmt(op->else_body) : nullptr;
    yields_.pop_back();
    const YieldStmt* ty = then_body ? trailing_yield(then_body) : nullptr;
    const YieldStmt* ey = else_body ? trailing_yield(else_body) : nullptr;
    std::vector<VarPtr> rvs;
    bool changed = cond != op->cond || then_body != op->then_body || else_body != op->else_body;
    std::set<size_t> tile_results;
    for (size_t i = 0; i < op->return_vars.size(); ++i) {
      const VarPtr& rv = op->return_vars[i];
      ExprPtr tv = ty && i < ty->values.size() ? ty->values[i] : nullptr;
      ExprPtr ev = ey && i < ey->values.size() ? ey->values[i] : nullptr;
      ExprPtr tile = is_tile(tv) ? tv : is_tile(ev) ? ev : nullptr;
      if (!tile && is_tensor(tv) && is_tensor(ev) && Ambiguous(rv.get())) tile = load_whole(tv, rv->span);
      if (rv->type->is<TensorType>() && tile) {
        VarPtr n = Var::make(rv->name, tile->type, rv->span);
        var_remap_[rv.get()] = {rv, n};
        rvs.push_back(n);
        tile_results.insert(i);
        changed = true;
      } else {
        rvs.push_back(mutate_def(rv));
        changed |= rvs.back() != rv;
      }
    }
    if (!tile_results.empty()) {
      then_body = WithTileYields(then_body, tile_results);
      if (else_body) else_body = WithTileYields(else_body, tile_results);
    }
    if (!changed) return self;
    return IfStmt::make(cond, then_body ? then_body : make_seq({}, op->span), else_body, std::move(rvs), op->span);
  }

  // A loop's yield: a tensor yielded into a tile carry is loaded whole; a tile yielded into a
  // tensor carry asks the loop to make that carry a tile.
  StmtPtr mutate_(const YieldStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    if (yields_.empty() || !yields_.back().active) return s;
    YieldCtx& y = yields_.back();
    std::vector<ExprPtr> values = s->as<YieldStmt>()->values;
    bool changed = false;
    for (size_t i = 0; i < values.size() && i < y.tile.size(); ++i) {
      if (y.tile[i] && is_tensor(values[i])) {
        values[i] = load_whole(values[i], op->span);
        changed = true;
      } else if (!y.tile[i] && y.tensor[i] && is_tile(values[i])) {
        y.needs.insert(i);
      }
    }
    return changed ? YieldStmt::make(values, op->span) : s;
  }

  // The rule-5 parameters added, in return order.
  std::vector<VarPtr> ReturnParams() const {
    std::vector<VarPtr> out;
    for (auto& [k, p] : ret_params_) out.push_back(p);
    return out;
  }

 private:
  // The whole of global tensor `g` of rank 3 or 4 as a tile of its own shape, for a batched matmul
  // operand (reference_ops.md §11). Kernel loads are 1-D or 2-D, so a loop (hoisted before the
  // statement) loads each [M, K] matrix of the batch on its own, batch axes dropped, into row b*M
  // of a zero-filled [B*M, K] carry, which KernelInPlaceCarries lets the assemble fill in place;
  // the result is that tile reshaped to g's shape. g[2, 4, 8] ->
  //   for b, (acc,) in pl.range(2, init_values=(pl.tile.create([8, 8], dtype=pl.FP32),)):
  //       m = pl.load(g, [b, 0, 0], [1, 4, 8], drop_dims=[0])
  //       acc_next = pl.assemble(acc, m, [b * 4, 0]); pl.yield_(acc_next)
  //   ... pl.reshape(acc_out, [2, 4, 8]) ...
  // A rank <= 2 tensor is loaded whole.
  ExprPtr LoadBatched(const ExprPtr& g, const std::string& op, const Span& span) {
    auto* t = g->type->as<TensorType>();
    const size_t rank = t->shape.size();
    if (rank <= 2) return load_whole(g, span);
    const BatchView view = ViewOf(g);
    std::vector<int64_t> dims;
    for (const ExprPtr& d : view.shape) {
      auto* c = d->as<ConstInt>();
      PYPTO_USER_CHECK(c, span, "pl." << op << " inside a kernel needs operands of static shape, got "
                                      << detail::describe(g->type),
                       "give the tensor static dimensions, or pl.slice a static block of it");
      dims.push_back(c->value);
    }
    int64_t batch = 1;
    for (size_t k = 0; k + 2 < rank; ++k) batch *= dims[k];
    auto idx = [&span](int64_t v) -> ExprPtr { return ConstInt::make(v, DataType::INDEX, span); };
    const int64_t m = dims[rank - 2], n = dims[rank - 1];
    ExprPtr init = Call::make_op("tile.create", {MakeTuple::make({idx(batch * m), idx(n)}, span)},
                                 {{"dtype", std::string(to_string(t->dtype))}}, span);
    VarPtr b = Var::make("b", ScalarType::make(DataType::INDEX), span);
    IterArgPtr acc = IterArg::make("batch_acc", init->type, init, span);
    // The batch index b row-major over the batch dims: [b] for rank 3, [b // d1, b % d1] for rank 4,
    // added to the view's offsets on the base tensor's axes; every base axis but the matrix's two
    // is dropped (a view's own dropped axes included).
    const size_t base_rank = view.offsets.size();
    std::vector<ExprPtr> off = view.offsets, shp(base_rank, idx(1));
    int64_t stride = 1;
    for (size_t k = rank - 2; k-- > 0;) {
      ExprPtr q = stride == 1 ? ExprPtr(b) : ExprPtr(BinaryExpr::make(BinaryOp::FloorDiv, b, idx(stride), span));
      ExprPtr coord = k == 0 ? q : ExprPtr(BinaryExpr::make(BinaryOp::Mod, q, idx(dims[k]), span));
      off[view.axes[k]] = plus(off[view.axes[k]], coord, span);
      stride *= dims[k];
    }
    const size_t row_axis = view.axes[rank - 2], col_axis = view.axes[rank - 1];
    shp[row_axis] = idx(m);
    shp[col_axis] = idx(n);
    std::vector<ExprPtr> drop;
    for (size_t k = 0; k < base_rank; ++k) {
      if (k != row_axis && k != col_axis) drop.push_back(idx(static_cast<int64_t>(k)));
    }
    ExprPtr load = Call::make_op("tile.load", {view.base, MakeTuple::make(off, span), MakeTuple::make(shp, span)},
                                 {{"drop_dims", drop}}, span);
    VarPtr mat = Var::make("batch_mat", load->type, span);
    ExprPtr row = BinaryExpr::make(BinaryOp::Mul, b, idx(m), span);
    ExprPtr put = Call::make_op("tile.assemble", {acc, mat, MakeTuple::make({row, idx(0)}, span)}, {}, span);
    VarPtr next = Var::make("batch_next", put->type, span);
    StmtPtr body = make_seq({AssignStmt::make(mat, load, span), AssignStmt::make(next, put, span),
                             YieldStmt::make({next}, span)}, span);
    const Var* gv = as_var(g);
    VarPtr out = Var::make(gv ? gv->name + "_batch" : std::string("batch"), init->type, span);
    hoisted_.push_back(ForStmt::make(b, idx(0), idx(batch), idx(1), {acc}, body, {out}, ForKind::Sequential, {}, span));
    return Call::make_op("tile.reshape", {out, MakeTuple::make(t->shape, span)}, {}, span);
  }

  // A rank > 2 operand of a batched product as a view of a kernel tensor: a pl.tensor.slice keeps
  // the tensor's axes `axes` (drop_dims drops the others) from `offsets` on, with the slice's shape.
  struct BatchView {
    ExprPtr base;                   // the kernel's tensor
    std::vector<ExprPtr> offsets;   // one per axis of base
    std::vector<size_t> axes;       // the axes of base the view keeps, in order
    std::vector<ExprPtr> shape;     // one per kept axis
  };

  // A slice of a tensor whose result has rank > 2 stays a view (kernel loads are 1-D or 2-D): a
  // batched product's operand loads it matrix by matrix. With a valid shape it is lowered (and
  // refused) as before.
  static bool IsBatchView(const std::vector<ExprPtr>& args, const Attrs& attrs) {
    if (args.size() != 3 || !is_tensor(args[0]) || attrs.count("pad_value")) return false;
    auto* shapes = args[1]->as<MakeTuple>();
    if (!shapes || !args[2]->is<MakeTuple>()) return false;
    size_t dropped = 0;
    if (auto it = attrs.find("drop_dims"); it != attrs.end()) {
      if (auto* l = std::get_if<std::vector<ExprPtr>>(&it->second)) dropped = l->size();
    }
    return shapes->elements.size() > dropped + 2;
  }

  // A 1-D / 2-D slice of a rank > 2 view: one load from the view's tensor at the composed offsets.
  ExprPtr LoadFromView(const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& sp) {
    PYPTO_USER_CHECK(args.size() == 3 && !attrs.count("pad_value") && args[1]->is<MakeTuple>() &&
                         args[2]->is<MakeTuple>(),
                     sp, "pl.tensor.slice of a rank-" << args[0]->type->as<TensorType>()->shape.size()
                                                       << " slice inside a kernel takes no valid_shape= or pad_value=",
                     "slice the kernel's tensor parameter directly");
    Attrs drop_only;
    if (auto it = attrs.find("drop_dims"); it != attrs.end()) drop_only["drop_dims"] = it->second;
    const BatchView w = ViewOf(Call::make_op("tensor.slice", args, drop_only, sp));
    auto idx = [&sp](int64_t v) -> ExprPtr { return ConstInt::make(v, DataType::INDEX, sp); };
    std::vector<ExprPtr> shp(w.offsets.size(), idx(1)), drop;
    for (size_t i = 0; i < w.axes.size(); ++i) shp[w.axes[i]] = w.shape[i];
    for (size_t k = 0; k < w.offsets.size(); ++k) {
      if (std::find(w.axes.begin(), w.axes.end(), k) == w.axes.end()) drop.push_back(idx(static_cast<int64_t>(k)));
    }
    Attrs load_attrs;
    if (!drop.empty()) load_attrs["drop_dims"] = drop;
    return Call::make_op("tile.load", {w.base, MakeTuple::make(w.offsets, sp), MakeTuple::make(shp, sp)}, load_attrs,
                         sp);
  }

  static ExprPtr plus(const ExprPtr& a, const ExprPtr& b, const Span& span) {
    auto* ca = a->as<ConstInt>();
    if (ca && ca->value == 0) return b;
    return BinaryExpr::make(BinaryOp::Add, a, b, span);
  }

  BatchView ViewOf(const ExprPtr& g) {
    const Call* slice = g->as<Call>();
    if (auto* v = as_var(g)) {
      auto it = batch_views_.find(v);
      slice = it == batch_views_.end() ? nullptr : it->second.slice->as<Call>();
    }
    if (!slice || !slice->is_op || slice->callee != "tensor.slice") {
      auto* t = g->type->as<TensorType>();
      BatchView w{g, std::vector<ExprPtr>(t->shape.size(), ConstInt::make(0, DataType::INDEX, g->span)), {}, t->shape};
      for (size_t k = 0; k < t->shape.size(); ++k) w.axes.push_back(k);
      return w;
    }
    BatchView inner = ViewOf(slice->args[0]);   // a slice of a view: offsets add up
    const auto& shapes = slice->args[1]->as<MakeTuple>()->elements;
    const auto& offsets = slice->args[2]->as<MakeTuple>()->elements;
    std::set<int64_t> drop;
    if (auto it = slice->attrs.find("drop_dims"); it != slice->attrs.end()) {
      for (const ExprPtr& e : std::get<std::vector<ExprPtr>>(it->second)) drop.insert(e->as<ConstInt>()->value);
    }
    BatchView w{inner.base, inner.offsets, {}, {}};
    for (size_t i = 0; i < shapes.size() && i < inner.axes.size(); ++i) {
      const size_t axis = inner.axes[i];
      w.offsets[axis] = plus(w.offsets[axis], offsets[i], slice->span);
      if (drop.count(static_cast<int64_t>(i))) continue;
      w.axes.push_back(axis);
      w.shape.push_back(shapes[i]);
    }
    return w;
  }

 public:
  // A rank > 2 slice used other than as a batched product's operand: kernel tiles are 1-D or 2-D.
  void CheckBatchViewsUsedOnlyByProducts(const StmtPtr& body) const {
    if (batch_views_.empty()) return;
    const outlining::UseDef ud = outlining::CollectUseDef(body);
    for (const auto& [v, view] : batch_views_) {
      if (ud.uses.count(v)) RefuseBatchView(view.var, view.span);
    }
  }

  void RefuseBatchView(const ExprPtr& e, const Span& span) const {
    auto* v = as_var(e);
    if (!v || !batch_views_.count(v)) return;
    throw UserError("pl.tensor.slice of rank " + std::to_string(v->type->as<TensorType>()->shape.size()) +
                        " inside a kernel ('" + v->name +
                        "') can only be an operand of pl.batch_matmul or pl.matmul_acc: kernel tiles are 1-D or 2-D",
                    span, "slice 2-D blocks (drop_dims= the axes of extent 1) to compute on them");
  }

 private:
  struct YieldCtx {
    bool active = false;          // a loop's body (an if's yields are fixed up by the if)
    std::vector<bool> tile;       // carry i is a tile
    std::vector<bool> tensor;     // carry i is declared a tensor (only these can need to become tiles: a
                                  // tile carry asking again converted every loop twice, 2^depth for a nest)
    std::set<size_t> needs;       // tensor carries the body yields a tile into
  };

  std::string FreshParamName(const std::string& base) const {
    std::string name = base;
    auto taken = [&](const std::string& n) {
      return std::any_of(fn_.params.begin(), fn_.params.end(), [&](const VarPtr& p) { return p->name == n; });
    };
    for (int k = 1; taken(name); ++k) name = base + "_" + std::to_string(k);
    return name;
  }

  static StmtPtr WithTileYields(const StmtPtr& body, const std::set<size_t>& idx) {
    auto stmts = flatten_stmts(body);
    if (stmts.empty()) return body;
    auto* y = stmts.back()->as<YieldStmt>();
    if (!y) return body;
    std::vector<ExprPtr> values = y->values;
    bool changed = false;
    for (size_t i : idx) {
      if (i < values.size() && is_tensor(values[i])) {
        values[i] = load_whole(values[i], y->span);
        changed = true;
      }
    }
    if (!changed) return body;
    stmts.back() = YieldStmt::make(values, y->span);
    return make_seq(stmts, body->span);
  }

  StmtPtr ConvertLoop(const ForStmt* op, const StmtPtr& self, const std::set<size_t>& force, std::set<size_t>* needs) {
    ExprPtr start = mutate_expr(op->start), stop = mutate_expr(op->stop), step = mutate_expr(op->step);
    bool changed = start != op->start || stop != op->stop || step != op->step;
    VarPtr loop_var = mutate_def(op->loop_var);
    changed |= loop_var != op->loop_var;
    std::vector<IterArgPtr> iter_args;
    YieldCtx y;
    y.active = true;
    for (size_t i = 0; i < op->iter_args.size(); ++i) {
      const IterArgPtr& ia = op->iter_args[i];
      ExprPtr init = mutate_expr(ia->init);
      const bool tile = ia->type->is<TensorType>() && (is_tile(init) || force.count(i) || Ambiguous(ia.get()));
      y.tile.push_back(tile);
      y.tensor.push_back(ia->type->is<TensorType>());
      VarPtr n;
      if (tile) {
        init = as_tile(init, ia->span);
        n = IterArg::make(ia->name, init->type, init, ia->span);
        var_remap_[ia.get()] = {ia, n};
      } else {
        n = mutate_def(ia);
        if (n == ia && init != ia->init) {
          n = IterArg::make(ia->name, ia->type, init, ia->span);
          var_remap_[ia.get()] = {ia, n};
        }
      }
      iter_args.push_back(std::static_pointer_cast<const IterArg>(n));
      changed |= n != ia;
    }
    Attrs attrs = mutate_attrs(op->attrs, &changed);
    yields_.push_back(y);
    StmtPtr body = mutate_stmt(op->body);
    *needs = yields_.back().needs;
    yields_.pop_back();
    changed |= body != op->body;
    std::vector<VarPtr> rvs;
    for (size_t i = 0; i < op->return_vars.size(); ++i) {
      const VarPtr& rv = op->return_vars[i];
      if (i < y.tile.size() && y.tile[i]) {
        VarPtr n = Var::make(rv->name, iter_args[i]->type, rv->span);
        var_remap_[rv.get()] = {rv, n};
        rvs.push_back(n);
      } else {
        rvs.push_back(mutate_def(rv));
      }
      changed |= rvs.back() != rv;
    }
    if (!changed) return self;
    auto loop = ForStmt::make(std::move(loop_var), std::move(start), std::move(stop), std::move(step),
                              std::move(iter_args), body ? body : make_seq({}, op->span), std::move(rvs), op->for_kind,
                              std::move(attrs), op->span)
                    ->with_typed_fields_of(*op);
    return loop;
  }

  // A tensor carry / if result that may be one of several tensors, in a kernel that only reads
  // such values: it becomes a tile (a copy of whichever it is).
  bool Ambiguous(const Var* v) const { return reads_ambiguous_only_ && roots_.of(v).size() > 1; }

  const Function& fn_;
  BufferRoots roots_;                 // of the kernel as written (views are roots of their own)
  bool reads_ambiguous_only_;         // only tensor ops read values of several roots
  std::unordered_set<const Expr*> transposed_globals_;   // tile.transpose of a loaded parameter, and its names
  std::map<size_t, VarPtr> ret_params_;
  std::vector<YieldCtx> yields_;
  std::vector<StmtPtr> hoisted_;   // statements to emit before the statement being converted
  struct ViewDef {
    ExprPtr slice;
    VarPtr var;
    Span span;
  };
  std::map<const Var*, ViewDef> batch_views_;   // names bound to a rank > 2 slice (their statements dropped)
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  std::map<std::string, std::vector<TypePtr>> added;   // kernel -> types of its rule-5 parameters
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel()) continue;
    Converter conv(*program, *fn);
    FunctionPtr nf = conv.mutate_function(fn);
    conv.CheckBatchViewsUsedOnlyByProducts(nf->body);
    auto extra = conv.ReturnParams();
    if (!extra.empty()) {
      std::vector<VarPtr> params = nf->params;
      std::vector<ParamDirection> dirs = nf->param_directions;
      for (auto& p : extra) {
        params.push_back(p);
        dirs.push_back(ParamDirection::Out);
        added[fn->name].push_back(p->type);
      }
      nf = WithParams(*nf, std::move(params), std::move(dirs));
    }
    if (nf != fn) out = out->with_function(nf);
  }
  return added.empty() ? out : ThreadReturnOutParams(out, added);
}

}  // namespace

// Its tile ops on loaded tensor copies are values (a tensor op's result is new), which
// VerifyDestinationReads, a check of the tile ops the user wrote, does not hold them to.
Pass ConvertTensorToTileOps() {
  return Pass{"ConvertTensorToTileOps", {}, {IRProperty::KernelTensorOpsConverted}, Run,
              /*invalidated=*/{IRProperty::DestinationReadsChecked}};
}

}  // namespace pypto::transforms
