// Small enumerations shared by the IR, the DSL (`pl.*` spellings) and the code generators.
// Each has a `to_string` giving the DSL spelling (e.g. DataType::FP32 -> "FP32") and a
// `parse_<enum>` returning false for an unknown spelling.
#pragma once
#include <cstdint>
#include <string>

namespace pypto::ir {

// pl.BOOL, pl.INT8, ..., pl.FP32, pl.INDEX, pl.TASK_ID
enum class DataType : uint8_t {
  BOOL, INT8, INT16, INT32, INT64, UINT8, UINT16, UINT32, UINT64,
  FP16, BF16, FP32, INDEX, TASK_ID,
};

enum class Layout : uint8_t { ND, DN };                                  // pl.Layout.ND / DN
enum class MemorySpace : uint8_t { Vec, Mat, Left, Right, Acc };          // pl.MemorySpace.*

// pl.FunctionType.*
enum class FunctionType : uint8_t { Opaque, Orchestration, InCore, AIC, AIV, Group, Spmd, Inline };
// pl.Level.* (where a function / scope runs) and pl.Role.*
enum class Level : uint8_t { None, AIC, AIV, CORE_GROUP, CHIP, HOST, CLUSTER };
enum class Role : uint8_t { None, Orchestrator, Worker };
// pl.CoreType.*: the cores a kernel runs on, stamped on each kernel / Group function by the
// InferKernelCoreTypes pass (Function::core_type). Unknown until that pass runs.
enum class CoreType : uint8_t { Unknown, AIC, AIV, MIXED };

// Declared direction of a function parameter (pl.Tensor = In, pl.Out[...], pl.InOut[...]).
enum class ParamDirection : uint8_t { In, Out, InOut };

// Per-call-site direction of one argument. Unset until DeriveCallDirections runs, except
// NoDep, which the parser sets for `pl.no_dep(arg)` / `no_dep_args=` and the pass keeps.
enum class ArgDirection : uint8_t { Unset, In, Out, InOut, NoDep, Scalar };

enum class ForKind : uint8_t { Sequential, Parallel, Unroll };            // pl.range / pl.parallel / pl.unroll
enum class ScopeKind : uint8_t { At, Spmd, Cluster };                     // pl.at / pl.spmd / pl.cluster
enum class RuntimeScopeMode : uint8_t { Auto, Manual };                   // PTO2ScopeMode::AUTO / MANUAL

enum class BinaryOp : uint8_t {
  Add, Sub, Mul, Div /* true division */, FloorDiv, Mod, Min, Max,
  Eq, Ne, Lt, Le, Gt, Ge, And, Or,
  BitAnd, BitOr, BitXor, Shl, Shr,   // integers only: & | ^ << >> (Python's meaning, wrapped to the dtype)
};
enum class UnaryOp : uint8_t { Neg, Not, BitNot /* ~ */ };
// Which part of a split chunked loop a ForStmt is (SplitChunkedLoops): printed
// loop_origin="chunk_outer" / "chunk_inner" / "chunk_remainder"; User for every other loop.
enum class LoopOrigin : uint8_t { User, ChunkOuter, ChunkInner, ChunkRemainder };
// How SplitChunkedLoops splits a chunked loop (spec anchor_features §7): printed
// chunk_policy="guarded" / "leading_full".
enum class ChunkPolicy : uint8_t { Guarded, LeadingFull };

const char* to_string(DataType v);
const char* to_string(Layout v);
const char* to_string(MemorySpace v);
const char* to_string(FunctionType v);
const char* to_string(Level v);
const char* to_string(Role v);
const char* to_string(CoreType v);   // "Unknown", "AIC", "AIV", "MIXED"
const char* to_string(ParamDirection v);
const char* to_string(ArgDirection v);
const char* to_string(ForKind v);
const char* to_string(ScopeKind v);
const char* to_string(RuntimeScopeMode v);
const char* to_string(BinaryOp v);   // the Python operator: "+", "//", "==", "and", "<<", ...
const char* to_string(UnaryOp v);    // "-", "not", "~"
bool is_bitwise(BinaryOp op);        // & | ^ << >>: integer operands only
const char* to_string(LoopOrigin v);   // "user", "chunk_outer", "chunk_inner", "chunk_remainder"
const char* to_string(ChunkPolicy v);  // "guarded", "leading_full"

bool parse_data_type(const std::string& s, DataType* out);
bool parse_memory_space(const std::string& s, MemorySpace* out);
bool parse_function_type(const std::string& s, FunctionType* out);
bool parse_level(const std::string& s, Level* out);
bool parse_role(const std::string& s, Role* out);
bool parse_core_type(const std::string& s, CoreType* out);
bool parse_layout(const std::string& s, Layout* out);
bool parse_loop_origin(const std::string& s, LoopOrigin* out);
bool parse_chunk_policy(const std::string& s, ChunkPolicy* out);

bool is_float(DataType t);     // FP16, BF16, FP32
bool is_integer(DataType t);   // signed/unsigned ints and INDEX (not BOOL, not TASK_ID)
bool is_signed(DataType t);
int bit_width(DataType t);     // storage width in bits (INDEX and TASK_ID: 64)
int byte_width(DataType t);    // storage bytes per element, at least 1: byte_width(FP16) == 2

}  // namespace pypto::ir
