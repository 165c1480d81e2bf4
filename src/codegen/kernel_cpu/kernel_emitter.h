// Internal to the CPU kernel backend: the emitter state shared by the statement translator
// (kernel_cpu_codegen.cpp), the kernel spellings of the shared scalar expression printer
// (kernel_scalar_exprs.cpp, over common/cpp_scalar_expr.h) and the tile op handlers
// (kernel_tile_ops.cpp).
//
// Values of a kernel body live in C++ as:
//   tensors  — `ctx->tensors[i]` of the tensor param the value is (a store returns its tensor);
//   tiles    — a local buffer of the tile's compute type (float for FP32/FP16/BF16), row-major,
//              with its dims as C++ expressions (TileRef);
//   scalars  — C++ locals / expressions.
#pragma once
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "pypto/codegen/cpp_scalar_expr.h"
#include "pypto/codegen/control_flow_printer.h"
#include "pypto/ir/error.h"
#include "pypto/ir/function.h"

namespace pypto::codegen::kernel_cpu {

// A tile buffer in the generated code.
struct TileRef {
  std::string buf;                 // pointer/array expression of the first element
  std::vector<std::string> dims;   // C++ int64 expressions, one per axis
  ir::DataType dtype = ir::DataType::FP32;
  std::string numel() const;       // "(d0 * d1)" or the constant product
  std::string dim(size_t i) const { return dims.at(i); }
  // Rows / cols of a 2-D view: rank 1 [N] is 1 x N; rank > 2 folds leading axes into rows.
  std::string rows() const;
  std::string cols() const;
  // The valid region (spec anchor_features §10): `valid_arr` names a checked `int64_t[rank]` of
  // run-time extents (0 <= v <= dim), `valid` its entries; both empty for a fully valid tile.
  std::string valid_arr;
  std::vector<std::string> valid;
  bool has_valid() const { return !valid.empty(); }
  std::string valid_rows() const { return valid.empty() ? rows() : valid.size() == 1 ? "1" : valid[0]; }
  std::string valid_cols() const { return valid.empty() ? cols() : valid.back(); }
  // Elements an element-wise op computes: the whole tile, or the rows [0, valid[0]) of it (a
  // contiguous prefix; the padding columns of those rows are computed too, keeping rows vectorised).
  std::string valid_prefix() const;
  // A tile a matmul reads in place (a tile.load stamped Call::reads_in_place by
  // KernelInPlaceMatmulLoads): `ptr` names a `const float*` to its
  // first element and `ld` its row stride, set by load_view (into the tensor, or at buf after a
  // copy). Empty for every other tile: buf, row stride cols().
  std::string ptr, ld;
};

// Spellings of a dtype in generated code.
std::string CType(ir::DataType t);         // compute type of a tile element / scalar: float, int32_t, ...
std::string StorageKind(ir::DataType t);   // pypto_kernel::Storage::F32, ...
std::string RuntimeDType(ir::DataType t);  // DataType::FLOAT32, ...

// Storage behind a value that flows into a yield target (loop iter_arg / if return var): the
// kernel's target of the shared control-flow printer.
struct CarrySlot {
  enum Kind { kTile, kScalar, kTensor } kind;
  TileRef tile;        // kTile
  std::string scalar;  // kScalar: a mutable C++ local
  std::string ctype;   // kScalar
  int tensor = -1;     // kTensor
};

// The kernel file's printer: lines and blocks are common::CppWriter's (two spaces a level),
// loops and branches common::ControlFlowPrinter's, scalar expressions
// common::CppScalarExprPrinter's with the kernel spellings. Method names follow the other
// emitters (snake_case; Generate() is the entry point).
class KernelEmitter : public common::CppScalarExprPrinter, public common::ControlFlowPrinter<CarrySlot> {
 public:
  // Prints one kernel from its own IR and the results the kernel pipeline stamped on it (it
  // reads no other function of the program).
  explicit KernelEmitter(const ir::Function& fn);
  // The whole kernel file:  KernelEmitter(*fn).Generate()
  std::string Generate();

  // --- used by the op handlers (output: common::CppWriter's line / open_block / close_block) ---
  // A fresh C++ identifier from `hint` (unique in the kernel, never a reserved name).
  std::string fresh(const std::string& hint);
  // The C++ expression of a scalar-typed IR expr (the kernel spellings: kernel_scalar_exprs.cpp).
  std::string scalar(const ir::ExprPtr& e) { return print_scalar(e); }
  // scalar(e) converted to dtype `to` (a tile op's scalar operand): a float into an integer
  // dtype as pl.cast converts (saturating, NaN gives 0: the bare conversion of NaN or an
  // out-of-range value is undefined), anything else by static_cast.
  //   scalar_as(f32_scalar, INT32) == "pypto_kernel::float_to_int<int32_t>(s)"
  std::string scalar_as(const ir::ExprPtr& e, ir::DataType to);
  // The tile an expr denotes: a bound tile Var, or a nested tile op evaluated into a temp.
  TileRef tile(const ir::ExprPtr& e);
  // `ctx->tensors[i]` of a tensor-valued expr (a tensor param or a store result).
  std::string tensor(const ir::ExprPtr& e);
  int tensor_index(const ir::ExprPtr& e);
  std::string tensor_name(const ir::ExprPtr& e);   // the param's name, for messages
  // tile.store(tile, offsets, tensor): emits the store; returns the tensor's index.
  int store(const ir::Call& call);
  // Declares a new tile buffer for a value of type `tt`.
  TileRef declare_tile(const std::string& hint, const ir::TileType& tt, const ir::Span& span);
  // Pending zeros (kernel_pending_zero.cpp): an FP32 `tile.full(0)` bound to a buffer of its
  // own writes nothing; a run-time flag declared with it says its zeros are still owed. Every
  // use of the buffer goes through tile() / emit_tile_op / a yield, which write the zeros first
  // when the flag is set; a matmul_acc whose accumulator it is reads it through
  // tile_keeping_zeros() and passes nullptr while the flag is set (the matmul then computes
  // a @ b without reading the buffer: the tiled GEMM's 32 KB fill per task disappears).
  // The flag of a buffer with pending zeros (a C++ bool), or "" for any other buffer.
  std::string pending_zero_flag(const TileRef& t) const;
  // tile(e), without writing a pending buffer's zeros.
  TileRef tile_keeping_zeros(const ir::ExprPtr& e);
  // Emits `if (flag) { fill; flag = false; }` for a buffer with pending zeros.
  void write_pending_zeros(const TileRef& t);
  const ir::Function& fn() const { return fn_; }

 private:
  friend class StmtTranslator;
  void bind_params();
  void emit_stmt(const ir::StmtPtr& s);
  void emit_assign(const ir::VarPtr& var, const ir::ExprPtr& value, const ir::Span& span);
  // Evaluates a tile-producing op call into `dst`.
  void emit_tile_op(const ir::Call* call, const TileRef& dst);
  // Evaluates an op call whose value is a tensor (tile.store); returns the tensor index.
  int emit_tensor_op(const ir::Call* call);
  std::string ident(const ir::Var* v);

  // common::CppScalarExprPrinter: the kernel spellings (kernel_scalar_exprs.cpp).
  std::string var_text(const ir::Var* v, const ir::Span& span) override;
  std::string scalar_type(ir::DataType d) const override { return CType(d); }
  [[noreturn]] void unsupported(const ir::ExprPtr& e) override;
  std::string int_literal(int64_t v, ir::DataType d) const override;
  std::string float_literal(double v) const override;
  std::string cast_text(ir::DataType to, const std::string& value) const override;
  std::string float_to_int_text(ir::DataType to, const std::string& value) const override;
  std::string python_op_text(const ir::BinaryExpr& b, const std::string& a, const std::string& c) override;
  std::string print_other(const ir::ExprPtr& e) override;  // block index / count, tensor.dim

  // common::ControlFlowPrinter: a carry is a CarrySlot declared before the loop / if.
  CarrySlot loop_carry(const ir::ForStmt& f, size_t i) override;
  void open_loop(const ir::ForStmt& f, const std::vector<CarrySlot>& carries) override;
  void bind_loop_results(const ir::ForStmt& f, const std::vector<CarrySlot>& carries) override;
  CarrySlot branch_result(const ir::IfStmt& s, size_t k) override;
  std::string condition(const ir::ExprPtr& cond) override { return common::CppTruthText(scalar(cond), common::ScalarDtypeOf(cond)); }
  void bind_branch_results(const ir::IfStmt& s, const std::vector<CarrySlot>& results) override;
  void print_body(const ir::StmtPtr& body) override { emit_stmt(body); }
  std::optional<common::CarryMove> yield_value(Frame& frame, size_t i, const ir::ExprPtr& value) override;
  std::string fresh_name(const std::string& base) override { return fresh(base); }
  CarrySlot declare_slot(const std::string& hint, const ir::TypePtr& type, const ir::Span& span);
  void assign_to_slot(const CarrySlot& slot, const ir::ExprPtr& value);
  void bind_to_slot(const ir::Var* v, const CarrySlot& slot);
  // Declares `dst`'s pending-zeros flag instead of a fill when `call` is an FP32 tile.full(0)
  // of dst's whole type (kernel_pending_zero.cpp); false (nothing emitted) otherwise.
  bool defer_zero_fill(const ir::Call& call, const TileRef& dst);
  // loop_carry: an init op computed straight into its fresh slot (no temp + copy).
  bool init_into_slot(const ir::IterArg& ia, const CarrySlot& slot);

  const ir::Function& fn_;
  std::set<std::string> used_names_;
  std::map<const ir::Var*, std::string> names_;      // scalar vars -> C++ expression
  std::map<const ir::Var*, TileRef> tiles_;          // tile vars -> buffer
  std::map<const ir::Var*, int> tensors_;            // tensor vars -> tensor param index
  std::map<int, std::string> tensor_param_names_;    // tensor slot -> param name (messages)
  std::map<const ir::Var*, TileRef> inplace_;        // tile vars computed straight into a carry slot
  std::map<std::string, std::string> zero_flags_;    // buffer -> flag of its pending zeros
  int tmp_counter_ = 0;
};

// The backend's handler tables, one per kind of the kernel op table (pypto/ir/kernel_ops.h);
// codegen::KernelCpuPrintedOps() lists their names, which must be exactly ir::KernelOps().
// Tile op handlers ("tile.add", ...): each writes the op's value into `dst` (kernel_tile_ops.cpp).
using TileOpHandler = std::function<void(KernelEmitter& em, const ir::Call& call, const TileRef& dst)>;
const std::map<std::string, TileOpHandler>& TileOps();
const TileOpHandler* FindTileOp(const std::string& name);
// Tensor-valued op handlers ("tile.store", ...): each emits the write and returns the index of
// the tensor parameter it writes (kernel_tile_ops.cpp).
using TensorOpHandler = std::function<int(KernelEmitter& em, const ir::Call& call)>;
const std::map<std::string, TensorOpHandler>& TensorOps();
// Scalar-valued op printers ("tile.read", "tensor.dim", ...): each returns the C++ expression
// (kernel_scalar_exprs.cpp).
using ScalarOpPrinter = std::function<std::string(KernelEmitter& em, const ir::Call& call)>;
const std::map<std::string, ScalarOpPrinter>& ScalarOps();

}  // namespace pypto::codegen::kernel_cpu
