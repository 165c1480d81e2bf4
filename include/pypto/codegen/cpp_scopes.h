// C++ names of the orchestration (L2) emitter, declared per block: a fresh name never shadows
// one of an enclosing block nor takes a reserved name (IsReservedCppName), a sibling block may
// reuse a name, and the names a block never used are returned when it closes (the emitter
// prints `(void)name;` for them). Implemented in src/codegen/orchestration/names.cpp; public so
// that tests check the naming rule directly.
//
//   CppScopes s;
//   s.push();
//   s.declare("c");    // "c"
//   s.declare("c");    // "c_1"
//   s.declare("for");  // "for_1" (a C++ keyword)
//   s.pop();           // {"c", "c_1", "for_1"}: declared, never used
#pragma once
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace pypto::codegen::orchestration {

class CppScopes {
 public:
  struct Decl {
    std::string name;
    bool used = false;
    bool voidable = true;   // emit `(void)name;` at block end when never referenced
  };
  void push();
  // Pops the innermost block; returns the names that need a `(void)name;`.
  std::vector<std::string> pop();
  // Declares a fresh identifier based on `base` (suffix _1, _2, ... on a clash).
  std::string declare(const std::string& base, bool voidable = true);
  // Reserves `name` exactly in the current block (InternalError if taken).
  void declare_exact(const std::string& name, bool voidable);
  void use(const std::string& name);
  bool is_used(const std::string& name) const;
  bool visible(const std::string& name) const;
  size_t depth() const { return blocks_.size(); }

 private:
  // Hashed: a 10,000-task MANUAL block declares tens of thousands of names, each looked up
  // along the block chain on every declare / use.
  struct Block {
    std::unordered_map<std::string, size_t> index;   // name -> position in `order`
    std::vector<Decl> order;
    // base -> the suffix its last declare in this block took: every smaller one (0 = the bare
    // base) was visible then and stays so while this block is open, so the next declare of
    // `base` here or in an inner block starts above it (n copies of a name: O(n), not O(n^2)).
    std::unordered_map<std::string, int> taken_upto;
  };
  Decl* find(const std::string& name);
  void insert(std::string name, bool voidable);
  std::vector<Block> blocks_;
};

}  // namespace pypto::codegen::orchestration
