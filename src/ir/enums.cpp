// Spellings of the small IR enumerations (the DSL's `pl.*` names) and dtype predicates.
#include "pypto/ir/enums.h"

#include <algorithm>
#include <cstddef>

namespace pypto::ir {

namespace {

template <class E, size_t N>
bool parse_from(const char* const (&names)[N], const std::string& s, E* out) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) {
      if (out) *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

template <size_t N>
const char* name_at(const char* const (&names)[N], size_t i) {
  return i < N ? names[i] : "<invalid>";
}

const char* const kDataType[] = {"BOOL", "INT8", "INT16", "INT32", "INT64", "UINT8", "UINT16",
                                 "UINT32", "UINT64", "FP16", "BF16", "FP32", "INDEX", "TASK_ID"};
const char* const kLayout[] = {"ND", "DN"};
const char* const kMemorySpace[] = {"Vec", "Mat", "Left", "Right", "Acc"};
const char* const kFunctionType[] = {"Opaque", "Orchestration", "InCore", "AIC", "AIV", "Group", "Spmd", "Inline"};
const char* const kLevel[] = {"None", "AIC", "AIV", "CORE_GROUP", "CHIP", "HOST", "CLUSTER"};
const char* const kRole[] = {"None", "Orchestrator", "Worker"};
const char* const kCoreType[] = {"Unknown", "AIC", "AIV", "MIXED"};
const char* const kParamDirection[] = {"In", "Out", "InOut"};
const char* const kArgDirection[] = {"Unset", "In", "Out", "InOut", "NoDep", "Scalar"};
const char* const kForKind[] = {"Sequential", "Parallel", "Unroll"};
const char* const kScopeKind[] = {"At", "Spmd", "Cluster"};
const char* const kRuntimeScopeMode[] = {"Auto", "Manual"};
const char* const kBinaryOp[] = {"+", "-", "*", "/", "//", "%", "min", "max",
                                 "==", "!=", "<", "<=", ">", ">=", "and", "or",
                                 "&", "|", "^", "<<", ">>"};
const char* const kUnaryOp[] = {"-", "not", "~"};
const char* const kLoopOrigin[] = {"user", "chunk_outer", "chunk_inner", "chunk_remainder"};
const char* const kChunkPolicy[] = {"guarded", "leading_full"};

}  // namespace

const char* to_string(DataType v) { return name_at(kDataType, static_cast<size_t>(v)); }
const char* to_string(Layout v) { return name_at(kLayout, static_cast<size_t>(v)); }
const char* to_string(MemorySpace v) { return name_at(kMemorySpace, static_cast<size_t>(v)); }
const char* to_string(FunctionType v) { return name_at(kFunctionType, static_cast<size_t>(v)); }
const char* to_string(Level v) { return name_at(kLevel, static_cast<size_t>(v)); }
const char* to_string(Role v) { return name_at(kRole, static_cast<size_t>(v)); }
const char* to_string(CoreType v) { return name_at(kCoreType, static_cast<size_t>(v)); }
const char* to_string(ParamDirection v) { return name_at(kParamDirection, static_cast<size_t>(v)); }
const char* to_string(ArgDirection v) { return name_at(kArgDirection, static_cast<size_t>(v)); }
const char* to_string(ForKind v) { return name_at(kForKind, static_cast<size_t>(v)); }
const char* to_string(ScopeKind v) { return name_at(kScopeKind, static_cast<size_t>(v)); }
const char* to_string(RuntimeScopeMode v) { return name_at(kRuntimeScopeMode, static_cast<size_t>(v)); }
const char* to_string(BinaryOp v) { return name_at(kBinaryOp, static_cast<size_t>(v)); }
const char* to_string(UnaryOp v) { return name_at(kUnaryOp, static_cast<size_t>(v)); }
bool is_bitwise(BinaryOp op) {
  return op == BinaryOp::BitAnd || op == BinaryOp::BitOr || op == BinaryOp::BitXor || op == BinaryOp::Shl ||
         op == BinaryOp::Shr;
}
const char* to_string(LoopOrigin v) { return name_at(kLoopOrigin, static_cast<size_t>(v)); }
const char* to_string(ChunkPolicy v) { return name_at(kChunkPolicy, static_cast<size_t>(v)); }

bool parse_data_type(const std::string& s, DataType* out) { return parse_from(kDataType, s, out); }
bool parse_memory_space(const std::string& s, MemorySpace* out) { return parse_from(kMemorySpace, s, out); }
bool parse_function_type(const std::string& s, FunctionType* out) { return parse_from(kFunctionType, s, out); }
bool parse_level(const std::string& s, Level* out) { return parse_from(kLevel, s, out); }
bool parse_role(const std::string& s, Role* out) { return parse_from(kRole, s, out); }
bool parse_core_type(const std::string& s, CoreType* out) { return parse_from(kCoreType, s, out); }
bool parse_layout(const std::string& s, Layout* out) { return parse_from(kLayout, s, out); }
bool parse_loop_origin(const std::string& s, LoopOrigin* out) { return parse_from(kLoopOrigin, s, out); }
bool parse_chunk_policy(const std::string& s, ChunkPolicy* out) { return parse_from(kChunkPolicy, s, out); }

bool is_float(DataType t) { return t == DataType::FP16 || t == DataType::BF16 || t == DataType::FP32; }

bool is_integer(DataType t) {
  switch (t) {
    case DataType::INT8: case DataType::INT16: case DataType::INT32: case DataType::INT64:
    case DataType::UINT8: case DataType::UINT16: case DataType::UINT32: case DataType::UINT64:
    case DataType::INDEX:
      return true;
    case DataType::BOOL: case DataType::FP16: case DataType::BF16: case DataType::FP32: case DataType::TASK_ID:
      return false;
  }
  return false;   // no `default:` above: -Wswitch names this switch for a new DataType
}

bool is_signed(DataType t) {
  switch (t) {
    case DataType::INT8: case DataType::INT16: case DataType::INT32: case DataType::INT64:
    case DataType::INDEX: case DataType::FP16: case DataType::BF16: case DataType::FP32:
      return true;
    case DataType::BOOL: case DataType::UINT8: case DataType::UINT16: case DataType::UINT32: case DataType::UINT64:
    case DataType::TASK_ID:
      return false;
  }
  return false;   // no `default:` above: -Wswitch names this switch for a new DataType
}

int byte_width(DataType t) { return std::max(1, bit_width(t) / 8); }

int bit_width(DataType t) {
  switch (t) {
    case DataType::BOOL: return 8;
    case DataType::INT8: case DataType::UINT8: return 8;
    case DataType::INT16: case DataType::UINT16: case DataType::FP16: case DataType::BF16: return 16;
    case DataType::INT32: case DataType::UINT32: case DataType::FP32: return 32;
    case DataType::INT64: case DataType::UINT64: case DataType::INDEX: case DataType::TASK_ID: return 64;
  }
  return 0;
}

}  // namespace pypto::ir
