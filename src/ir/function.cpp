// Function and Program factories and lookups.
#include "pypto/ir/function.h"

#include <cctype>
#include <set>

#include "describe.h"
#include "pypto/ir/error.h"

namespace pypto::ir {

std::shared_ptr<const Function> Function::with_core_type(CoreType t) const {
  auto f = std::make_shared<Function>(*this);
  f->core_type = t;
  return f;
}

std::shared_ptr<const Function> Function::with_group_sync(GroupSync g) const {
  auto f = std::make_shared<Function>(*this);
  f->group_sync = std::move(g);
  return f;
}

std::shared_ptr<const Function> Function::with_param_slots(std::vector<int64_t> slots) const {
  auto f = std::make_shared<Function>(*this);
  f->param_slots = std::move(slots);
  return f;
}

std::shared_ptr<const Function> Function::with_task_ids(std::vector<TaskIdInfo> ids) const {
  for (auto& i : ids) {
    PYPTO_CHECK(i.var && is_task_id(i.var->type), "function '" << name << "': task_ids entry is not a TaskId Var");
    PYPTO_CHECK(i.slots >= 0, "function '" << name << "': task_ids entry '" << i.var->name << "' has negative slots");
    PYPTO_CHECK(!i.submit || i.submit->type->is<TupleType>(),
                "function '" << name << "': task_ids entry '" << i.var->name << "' names a submit that is no tuple");
  }
  auto f = std::make_shared<Function>(*this);
  f->task_ids = std::move(ids);
  return f;
}

std::shared_ptr<const Function> Function::with_returned_params(std::vector<int64_t> ps) const {
  for (int64_t p : ps) {
    PYPTO_CHECK(p >= -1 && p < static_cast<int64_t>(params.size()),
                "function '" << name << "': returned_params entry " << p << " is not a parameter index");
  }
  auto f = std::make_shared<Function>(*this);
  f->returned_params = std::move(ps);
  return f;
}

std::shared_ptr<const Function> Function::with_group_kernels(GroupKernels kernels) const {
  auto f = std::make_shared<Function>(*this);
  f->group_kernels = std::move(kernels);
  return f;
}

std::shared_ptr<const Function> Function::with_task_statements(int64_t n) const {
  PYPTO_CHECK(n >= 0, "function '" << name << "': negative task_statements " << n);
  auto f = std::make_shared<Function>(*this);
  f->task_statements = n;
  return f;
}

std::shared_ptr<const Function> Function::with_batched_creates(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null batched_creates entry");
  auto f = std::make_shared<Function>(*this);
  f->batched_creates = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_non_negative_vars(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null non_negative_vars entry");
  auto f = std::make_shared<Function>(*this);
  f->non_negative_vars = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_call_operands(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null call_operands entry");
  auto f = std::make_shared<Function>(*this);
  f->call_operands = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_open_calls(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null open_calls entry");
  auto f = std::make_shared<Function>(*this);
  f->open_calls = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_cut_calls(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null cut_calls entry");
  auto f = std::make_shared<Function>(*this);
  f->cut_calls = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_carried_operands(std::vector<VarPtr> vars) const {
  for (auto& v : vars) PYPTO_CHECK(v, "function '" << name << "': null carried_operands entry");
  auto f = std::make_shared<Function>(*this);
  f->carried_operands = std::move(vars);
  return f;
}

std::shared_ptr<const Function> Function::with_array_backings(std::vector<ArrayBackingEntry> entries) const {
  for (auto& e : entries) {
    PYPTO_CHECK(e.version && e.backing && e.version->type->is<ArrayType>() && e.backing->type->is<ArrayType>(),
                "function '" << name << "': array_backings entry is not a pair of pl.Array Vars");
  }
  auto f = std::make_shared<Function>(*this);
  f->array_backings = std::move(entries);
  return f;
}

const Var* Function::array_backing_of(const Var* v) const {
  for (auto& e : array_backings) {
    if (e.version.get() == v) return e.backing.get();
  }
  return v;
}

const TaskIdInfo* Function::task_id_info(const Var* v) const {
  for (auto& i : task_ids) {
    if (i.var.get() == v) return &i;
  }
  return nullptr;
}

namespace {

// A Python identifier's shape, bytewise: [A-Za-z_] or a non-ASCII (UTF-8) byte first, then also
// digits. Python's own rules for non-ASCII letters are the parser's; this keeps out what a file
// name or C++ must not see ('/', '.', quotes, spaces, control characters).
bool IsIdentifierName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '_' || u >= 0x80)) return false;
  }
  return true;
}

}  // namespace

std::shared_ptr<const Function> Function::make(std::string name, FunctionType type, std::vector<VarPtr> params,
                                               std::vector<ParamDirection> dirs, std::vector<TypePtr> return_types,
                                               StmtPtr body, Level level, Role role, Attrs attrs, Span span) {
  // The name becomes C++ identifiers and file names (orchestration/<name>.cpp): a hand-built
  // "../../x" wrote files outside the output directory, a quote reached g++.
  PYPTO_USER_CHECK(IsIdentifierName(name), span, "function name '" << name << "' is not an identifier",
                   "name a function as Python does: letters, digits and '_' (not first), or non-ASCII letters");
  PYPTO_CHECK(dirs.size() == params.size(),
              "function '" << name << "': " << dirs.size() << " param directions for " << params.size() << " params");
  for (size_t i = 0; i < params.size(); ++i) {
    PYPTO_CHECK(params[i], "function '" << name << "' has a null param");
    if (dirs[i] != ParamDirection::In) {
      const Span& s = params[i]->span.known() ? params[i]->span : span;
      PYPTO_USER_CHECK(params[i]->type->is<TensorType>(), s,
                       "parameter '" << params[i]->name << "' of type " << detail::describe(params[i]->type)
                                     << " cannot be " << to_string(dirs[i]),
                       "only tensors can be pl.Out / pl.InOut; scalars are always inputs");
    }
  }
  for (auto& t : return_types) PYPTO_CHECK(t, "function '" << name << "' has a null return type");
  auto f = std::make_shared<Function>();
  f->name = std::move(name);
  f->type = type;
  f->level = level;
  f->role = role;
  f->params = std::move(params);
  f->param_directions = std::move(dirs);
  f->return_types = std::move(return_types);
  f->body = std::move(body);
  f->attrs = std::move(attrs);
  f->span = std::move(span);
  return f;
}

TypePtr Function::call_result_type() const {
  if (return_types.size() == 1) return return_types[0];
  return TupleType::make(return_types);
}

std::shared_ptr<const Program> Program::make(std::string name, std::vector<FunctionPtr> functions,
                                             std::vector<VarPtr> dynamic_dims, Span span) {
  std::set<std::string> seen;
  for (auto& f : functions) {
    PYPTO_CHECK(f, "program '" << name << "' has a null function");
    PYPTO_USER_CHECK(seen.insert(f->name).second, f->span,
                     "program '" << name << "' defines function '" << f->name << "' twice",
                     "give each function its own name");
  }
  for (auto& d : dynamic_dims) PYPTO_CHECK(d, "program '" << name << "' has a null dynamic dim");
  auto p = std::make_shared<Program>();
  p->name = std::move(name);
  p->functions = std::move(functions);
  p->dynamic_dims = std::move(dynamic_dims);
  p->span = std::move(span);
  return p;
}

FunctionPtr Program::get(const std::string& fname) const {
  for (auto& f : functions) {
    if (f->name == fname) return f;
  }
  return nullptr;
}

std::shared_ptr<const Program> Program::with_function(FunctionPtr fn) const {
  PYPTO_CHECK(fn, "with_function needs a function");
  auto p = std::make_shared<Program>(*this);
  bool replaced = false;
  for (auto& f : p->functions) {
    if (f->name == fn->name) {
      f = fn;
      replaced = true;
    }
  }
  if (!replaced) p->functions.push_back(std::move(fn));
  return p;
}

}  // namespace pypto::ir
