// Attributes: a small ordered map from name to value, carried by Call, ForStmt, ScopeStmt
// and Function. Ordered so that printing and hashing are deterministic.
//
// Well-known keys (the pass or parser that writes them in parentheses):
//   Call "dtype", "target_memory", "manual_dep", ...   op parameters that are not exprs (parser)
//   ScopeStmt "level" (string), "core_num" (expr), "name_hint" (string), "split" / "slot_num"
//             (int), "auto_chunk" (bool), "dump_vars" (expr list) (parser); the task options
//             (deps, predicate, no_dep_args, sync_start, allow_early_resolve) are the typed
//             ScopeStmt::options, a loop's chunk= / chunk_policy= the typed ForStmt::chunk
//   Call "dummy_task" (bool) on system.task_dummy (its edges are the typed Call::manual_dep_edges;
//        make_op takes them as the op's "manual_dep_edges" parameter)
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

namespace pypto::ir {

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

using AttrValue = std::variant<bool, int64_t, double, std::string, ExprPtr, std::vector<ExprPtr>>;
using Attrs = std::map<std::string, AttrValue>;

// Typed lookups; return nullptr when absent or of another type.
template <class T>
const T* attr_get(const Attrs& a, const std::string& key) {
  auto it = a.find(key);
  return it == a.end() ? nullptr : std::get_if<T>(&it->second);
}

}  // namespace pypto::ir
