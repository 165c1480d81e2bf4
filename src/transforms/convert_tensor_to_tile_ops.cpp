// ConvertTensorToTileOps
//
// What: in every kernel function (InCore / AIC / AIV; a CORE_GROUP pl.at or pl.spmd body has
//   been outlined into one by now), lowers the tensor-level ops of spec anchor_features §9 to
//   tile ops, so the CPU kernel backend only ever sees tiles:
//     tensor.<op>(a, b, ...)               -> tile.<op>(A, B, ...)   every mirrored compute op
//                                             (tensor_compute_ops.cpp); a tensor operand that is
//                                             still a global tensor is loaded whole:
//                                             A = tile.load(a, [0, ..], a.shape)
//     tensor.slice(g, shapes, offsets)     -> tile.load(g, offsets, shapes)      g global
//     tensor.slice(t, shapes, offsets)     -> tile.slice(t, shapes, offsets)     t a tile
//     tensor.assemble(g, v, offsets)       -> tile.store(V, offsets, g)          g global
//     tensor.assemble(t, v, offsets)       -> tile.assemble(t, V, offsets)       t a tile
//     tensor.reshape(x, shape)             -> tile.reshape(X, shape)
//     tensor.create(shape) [init_value=v]  -> tile.full(shape, v or 0)   (Refine: R leaves the
//                                             contents unspecified; we fill, honouring init_value)
//   A value whose type changes from Tensor to Tile gets a fresh Var (IRMutator), so later uses
//   follow.
//       c = pl.assemble(c, pl.add(a, b), [0, 0])   ==>   c = pl.store(pl.add(pl.load(a, ..), pl.load(b, ..)), [0, 0], c)
// Input invariants: outlining ran (OutlineIncoreScopes); the frontend admitted tensor compute
//   ops only in kernels and CORE_GROUP / pl.spmd bodies.
// Output invariants: no kernel calls a tensor.* op of the list above.
// Errors (located): a kernel returning, or carrying through a loop / branch, a value that
//   became a tile (write it into an Out parameter with pl.assemble instead).
// Why: the reference DSL lets kernels and pl.at bodies be written on whole tensors; the CPU
//   kernel backend, like the reference's, computes on tiles.
#include <algorithm>
#include <unordered_set>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/ir/op_registry.h"
#include "pypto/transforms/passes.h"

namespace pypto::ir::ops {
const std::vector<std::string>& tensor_compute_op_names();
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

class Converter : public IRMutator {
 public:
  ExprPtr mutate_(const Call* op, const ExprPtr& self) override {
    if (!op->is_op || op->callee.rfind("tensor.", 0) != 0) return IRMutator::mutate_(op, self);
    // Operands first, without rebuilding the tensor call: an operand may already be a tile.
    bool changed = false;
    std::vector<ExprPtr> args = mutate_exprs(op->args, &changed);
    const std::string name = op->callee.substr(7);
    const Span& sp = op->span;
    const auto& compute = ops::tensor_compute_op_names();
    if (std::find(compute.begin(), compute.end(), name) != compute.end()) {
      std::vector<ExprPtr> tiles;
      for (auto& a : args) tiles.push_back(as_tile(a, sp));
      return Call::make_op("tile." + name, tiles, op->attrs, sp);
    }
    if (name == "slice" && args.size() == 3) {
      if (is_tile(args[0])) return Call::make_op("tile.slice", {args[0], args[1], args[2]}, {}, sp);
      return Call::make_op("tile.load", {args[0], args[2], args[1]}, {}, sp);
    }
    if (name == "assemble" && args.size() == 3) {
      ExprPtr value = as_tile(args[1], sp);
      if (is_tile(args[0])) return Call::make_op("tile.assemble", {args[0], value, args[2]}, {}, sp);
      return Call::make_op("tile.store", {value, args[2], args[0]}, {}, sp);
    }
    if (name == "reshape" && args.size() == 2) {
      return Call::make_op("tile.reshape", {as_tile(args[0], sp), args[1]}, {}, sp);
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
    return changed ? ExprPtr(Call::make_op(op->callee, args, op->attrs, sp)) : self;
  }

  StmtPtr mutate_(const ReturnStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    for (auto& v : s->as<ReturnStmt>()->values) {
      PYPTO_USER_CHECK(!is_tile(v), op->span,
                       "this kernel returns a value computed with tensor ops; a kernel returns tensors it wrote",
                       "write the value into a pl.Out parameter, e.g. out = pl.assemble(out, value, [0, 0]), and "
                       "return that parameter");
    }
    return s;
  }

  StmtPtr mutate_(const ForStmt* op, const StmtPtr& self) override {
    StmtPtr s = IRMutator::mutate_(op, self);
    auto* f = s->as<ForStmt>();
    for (size_t i = 0; i < f->iter_args.size(); ++i) {
      const auto& ia = f->iter_args[i];
      PYPTO_USER_CHECK(!(is_tensor(ia) && is_tile(ia->init)), ia->span,
                       "loop carry '" << ia->name << "' holds a value computed with tensor ops in a kernel; tensor "
                                         "values computed in kernels cannot be loop-carried yet",
                       "carry a tile instead (pl.load the tensor before the loop), or assemble into a pl.Out "
                       "parameter in each iteration");
    }
    return s;
  }
};

ProgramPtr Run(const ProgramPtr& program) {
  ProgramPtr out = program;
  for (const FunctionPtr& fn : program->functions) {
    if (!fn->is_kernel()) continue;
    Converter conv;
    FunctionPtr nf = conv.mutate_function(fn);
    if (nf != fn) out = out->with_function(nf);
  }
  return out;
}

}  // namespace

Pass ConvertTensorToTileOps() { return Pass{"ConvertTensorToTileOps", {}, {}, Run, /*invalidated=*/{}}; }

}  // namespace pypto::transforms
