// StaticTaskGraphDot (static_task_graph.h): an interpreter of chip-level orchestration IR that
// records, instead of running kernels, the graph the runtime's race checker would record.
//
//   Value      what an IR variable holds: a number, a tensor view (storage + strided box), a
//              set of task ids per slot (a TaskId, or a pl.parallel / pl.array TaskId array),
//              a tuple, or "unknown until run time" (with the reason, for the error)
//   Tracker    the shadow dependency tracker, every task live (runtime/src/dep_tracker.h)
//   Graph      nodes (tasks, barriers, get_tensor_data waits) and their typed predecessors
#include "pypto/transforms/static_task_graph.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "pypto/ir/error.h"
#include "pypto/ir/mutator.h"
#include "pypto/transforms/passes.h"
#include "pypto/transforms/return_lineage.h"

namespace pypto::transforms {

using namespace ir;

namespace {

const char* kUseExecuted = "use the executed graph instead: task_graph(...) with arguments, or pypto graph without --static";

// The interpreter's bounds: loop iterations in all, and nodes. A loop count the user gives
// (--scalar n=100000000000) was followed iteration by iteration: the process grew until the
// kernel killed it, and Ctrl-C cannot stop a C++ loop.
constexpr uint64_t kMaxLoopIterations = 10'000'000;
constexpr size_t kMaxNodes = 200'000;   // twice the 100,000-task runs whose executed graph is drawn
const char* kSmallerValues = "give smaller values (pypto graph --static --scalar / --dim, task_graph(static=True, ...)), "
                             "or run a smaller problem and draw its executed graph";

// ---------------------------------------------------------------- tensor views (region.cpp)

// A view of a storage, in elements: what Region::of computes from a Tensor.
struct View {
  int storage = 0;
  bool manual_dep = false;   // created with manual_dep=True: its accesses are untracked
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
};

struct Region {
  int64_t lo = 0, hi = 0, offset = 0, rem = 0;
  bool empty = false, dense = false, box = false;
  std::vector<int64_t> shape, strides, start;
};

// Per-axis coordinates of the offset, axes by stride (largest first), when unique.
void decompose(Region& r) {
  r.box = false;
  const size_t n = r.shape.size();
  if (n == 0) return;
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) {
    if (r.strides[i] <= 0) return;
    order[i] = i;
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return r.strides[a] > r.strides[b]; });
  for (size_t k = 1; k < n; ++k)
    if (r.strides[order[k]] == r.strides[order[k - 1]]) return;
  if (r.offset < 0) return;
  r.start.assign(n, 0);
  int64_t rem = r.offset;
  for (size_t k = 0; k < n; ++k) {
    r.start[order[k]] = rem / r.strides[order[k]];
    rem %= r.strides[order[k]];
  }
  r.rem = rem;
  int64_t m = rem;
  for (size_t k = n; k-- > 1;) {
    const size_t d = order[k];
    m += (r.start[d] + r.shape[d] - 1) * r.strides[d];
    if (m >= r.strides[order[k - 1]]) return;
  }
  r.box = true;
}

Region region_of(const View& v) {
  Region r;
  r.offset = v.offset;
  int64_t lo = v.offset, hi = v.offset, count = 1, dense_stride = 1;
  bool dense = true;
  for (size_t i = v.shape.size(); i-- > 0;) {
    const int64_t sh = v.shape[i], st = v.strides[i];
    count *= sh;
    if (sh != 1 && st != dense_stride) dense = false;
    dense_stride *= sh;
    if (sh == 0) continue;
    const int64_t ext = (sh - 1) * st;
    if (ext < 0) lo += ext;
    else hi += ext;
  }
  r.empty = count == 0;
  r.lo = lo;
  r.hi = hi + 1;
  r.dense = dense;
  if (!dense) {
    r.shape = v.shape;
    r.strides = v.strides;
    decompose(r);
  }
  return r;
}

bool same_layout(const Region& a, const Region& b) { return a.strides == b.strides && a.shape.size() == b.shape.size(); }

bool same_as(const Region& a, const Region& b) {
  if (a.dense || b.dense) return a.dense == b.dense && a.lo == b.lo && a.hi == b.hi;
  return same_layout(a, b) && a.offset == b.offset && a.shape == b.shape;
}

bool overlap(const Region& a, const Region& b) {
  if (a.empty || b.empty) return false;
  if (a.hi <= b.lo || b.hi <= a.lo) return false;
  if (a.dense || b.dense) return true;
  if (a.box && b.box && same_layout(a, b)) {
    if (a.rem != b.rem) return false;
    for (size_t i = 0; i < a.shape.size(); ++i)
      if (a.start[i] + a.shape[i] <= b.start[i] || b.start[i] + b.shape[i] <= a.start[i]) return false;
  }
  return true;
}

bool contains(const Region& outer, const Region& inner) {
  if (inner.empty) return true;
  if (outer.empty) return false;
  if (outer.dense) return outer.lo <= inner.lo && inner.hi <= outer.hi;
  if (outer.box && inner.box && same_layout(outer, inner) && outer.rem == inner.rem) {
    for (size_t i = 0; i < outer.shape.size(); ++i)
      if (inner.start[i] < outer.start[i] || inner.start[i] + inner.shape[i] > outer.start[i] + outer.shape[i]) return false;
    return true;
  }
  return false;
}

std::vector<int64_t> row_major(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

// ---------------------------------------------------------------- values

struct Value {
  enum class Kind { None, Int, Float, View, Ids, Tuple, Unknown } kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  View view;
  std::vector<std::set<int>> slots;   // Ids: node indices per slot
  std::vector<Value> elems;           // Tuple
  std::string why;                    // Unknown: "'M' is known only when the program runs"
  std::string help;                   // Unknown: what to do about it

  static Value num(int64_t v) { Value x; x.kind = Kind::Int; x.i = v; return x; }
  static Value real(double v) { Value x; x.kind = Kind::Float; x.f = v; return x; }
  static Value ids(size_t n) { Value x; x.kind = Kind::Ids; x.slots.assign(n, {}); return x; }
  static Value unknown(std::string why, std::string help) {
    Value x;
    x.kind = Kind::Unknown;
    x.why = std::move(why);
    x.help = std::move(help);
    return x;
  }
  bool numeric() const { return kind == Kind::Int || kind == Kind::Float; }
  double as_double() const { return kind == Kind::Float ? f : static_cast<double>(i); }
  std::set<int> all_ids() const {
    std::set<int> out;
    for (auto& s : slots) out.insert(s.begin(), s.end());
    return out;
  }
};

// ---------------------------------------------------------------- the recorded graph

// Ranked: explicit wins over automatic, automatic over a wait. kChainEdge: HOST only (the L3
// runtime orders the tasks of one target), ranked like an automatic edge.
enum EdgeKind : int { kWaitEdge, kAutoEdge, kChainEdge, kExplicitEdge };

int rank_of(int kind) { return kind == kExplicitEdge ? 2 : kind == kWaitEdge ? 0 : 1; }

struct GraphNode {
  enum class Kind { Task, Barrier, Wait } kind = Kind::Task;
  int task = 0;                 // task number (1-based, barriers included); 0 for a wait
  std::string label, core, where;
  bool predicated = false;
  std::map<int, int> preds;     // predecessor node -> strongest edge kind

  void add_pred(int p, int k) {
    auto it = preds.find(p);
    if (it == preds.end() || rank_of(k) > rank_of(it->second)) preds[p] = k;
  }
};

// The shadow tracker: per storage, live regions with their last writer and readers since.
class Tracker {
 public:
  void access(int storage, const Region& r, bool read, bool write, int self, std::vector<int>& deps) {
    if (r.empty) return;
    auto& entries = by_storage_[storage];
    Entry* same = nullptr;
    for (auto it = entries.begin(); it != entries.end();) {
      Entry& e = *it;
      if (overlap(e.region, r)) {
        if (e.writer >= 0 && e.writer != self) deps.push_back(e.writer);
        const bool is_same = same_as(e.region, r);
        if (write) {
          for (int rd : e.readers)
            if (rd != self) deps.push_back(rd);
          if (!is_same && contains(r, e.region)) {
            it = entries.erase(it);
            continue;
          }
        }
        if (is_same && !same) same = &e;
      }
      ++it;
    }
    if (same) {
      if (write) {
        same->writer = self;
        same->readers.clear();
      } else if (read && (same->readers.empty() || same->readers.back() != self)) {
        same->readers.push_back(self);
      }
      return;
    }
    Entry e;
    e.region = r;
    if (write) e.writer = self;
    else e.readers.push_back(self);
    entries.push_back(std::move(e));
  }

  // The last writers of regions overlapping `r` (what a get_tensor_data wait follows).
  void writers_of(int storage, const Region& r, std::vector<int>& out) const {
    auto it = by_storage_.find(storage);
    if (it == by_storage_.end()) return;
    for (const Entry& e : it->second)
      if (e.writer >= 0 && overlap(e.region, r)) out.push_back(e.writer);
  }

 private:
  struct Entry {
    Region region;
    int writer = -1;
    std::vector<int> readers;
  };
  std::unordered_map<int, std::vector<Entry>> by_storage_;
};

std::string site_of(const Span& s) { return s.known() ? source_file_name(s.file) + ":" + std::to_string(s.line) : ""; }

std::string dot_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

// ---------------------------------------------------------------- the interpreter

class Interpreter {
 public:
  Interpreter(const Program& program, const StaticGraphInputs& inputs, bool host)
      : program_(program), inputs_(inputs), host_(host) {
    for (auto& d : program.dynamic_dims) dim_vars_[d.get()] = d->name;
  }

  void run_entry(const Function& fn) {
    for (size_t i = 0; i < fn.params.size(); ++i) {
      const VarPtr& p = fn.params[i];
      if (auto* tt = p->type->as<TensorType>()) {
        View v;
        v.storage = next_storage_++;
        v.shape = shape_of(*tt, p->span, "the shape of parameter '" + p->name + "'");
        v.strides = row_major(v.shape);
        Value x;
        x.kind = Value::Kind::View;
        x.view = v;
        env_[p.get()] = x;
      } else if (auto it = inputs_.int_scalars.find(p->name); it != inputs_.int_scalars.end()) {
        env_[p.get()] = Value::num(it->second);
      } else if (auto ft = inputs_.float_scalars.find(p->name); ft != inputs_.float_scalars.end()) {
        env_[p.get()] = Value::real(ft->second);
      } else {
        env_[p.get()] = Value::unknown("'" + p->name + "' is known only when the program runs",
                                       "give its value: task_graph(static=True, " + p->name + "=...) or pypto graph "
                                       "--static --scalar " + p->name + "=V");
      }
    }
    manual_.push_back(false);
    run(fn.body);
  }

  std::string dot() const {
    std::ostringstream os;
    os << "digraph pypto_tasks {\n"
          "  graph [static=true];\n"
          "  rankdir=TB;\n"
          "  node [shape=box, style=rounded, fontname=\"Helvetica\", fontsize=10];\n"
          "  edge [fontname=\"Helvetica\", fontsize=9];\n";
    auto id = [&](int n) { return nodes_[n].task ? "t" + std::to_string(nodes_[n].task) : "w" + std::to_string(n); };
    for (size_t n = 0; n < nodes_.size(); ++n) {
      const GraphNode& d = nodes_[n];
      std::string label, attrs, kind;
      if (d.kind == GraphNode::Kind::Wait) {
        label = "get_tensor_data";
        attrs = "shape=ellipse, fontsize=8";
        kind = "wait";
      } else if (d.kind == GraphNode::Kind::Barrier) {
        label = "barrier #" + std::to_string(d.task);
        attrs = "shape=diamond, style=solid";
        kind = "barrier";
      } else {
        label = d.label + "\n" + d.core + "  #" + std::to_string(d.task);
        if (d.predicated) label += "\n(runs if its predicate holds)";
        kind = "task";
      }
      if (!d.where.empty()) label += "\n" + d.where;
      os << "  " << id(static_cast<int>(n)) << " [label=\"" << dot_escape(label) << "\", kind=\"" << kind << "\"";
      if (d.task) os << ", task=" << d.task;
      if (!d.where.empty()) os << ", source=\"" << dot_escape(d.where) << "\"";
      if (d.predicated) os << ", predicated=true";
      if (!attrs.empty()) os << ", " << attrs;
      os << "];\n";
    }
    for (size_t n = 0; n < nodes_.size(); ++n) {
      for (const auto& [p, k] : nodes_[n].preds) {
        os << "  " << id(p) << " -> " << id(static_cast<int>(n));
        if (k == kExplicitEdge) os << " [kind=\"explicit\", style=bold, color=\"#1f5fbf\"]";
        else if (k == kChainEdge) os << " [kind=\"chain\", style=dashed]";
        else if (k == kWaitEdge) os << " [kind=\"wait\", style=dotted]";
        else os << " [kind=\"auto\"]";
        os << ";\n";
      }
    }
    os << "}\n";
    return os.str();
  }

 private:
  // ---- errors and required values
  [[noreturn]] static void refuse(const std::string& what, const Span& span, const std::string& help) {
    throw UserError("no static task graph: " + what, span, help);
  }

  // Where a refusal about `e` points: a variable's span is where it was defined (a scalar
  // parameter's declaration, which the refusal pointed at), so one about a variable points at
  // `use`, the statement or call that needs its value.
  static const Span& use_site(const ExprPtr& e, const Span& use) {
    return e->is<Var>() || e->is<IterArg>() ? use : e->span;
  }

  int64_t require_int(const ExprPtr& e, const std::string& role, const Span& use) {
    Value v = eval(e);
    if (v.kind == Value::Kind::Unknown) refuse(v.why + ", and it decides " + role, use_site(e, use), v.help);
    if (v.kind == Value::Kind::Int) return v.i;
    if (v.kind == Value::Kind::Float) return static_cast<int64_t>(v.f);
    refuse(role + " is not a number", use_site(e, use), kUseExecuted);
  }

  std::vector<int64_t> require_ints(const ExprPtr& e, const std::string& role, const Span& use) {
    auto* t = e->as<MakeTuple>();
    if (!t) refuse(role + " is not a list", use_site(e, use), kUseExecuted);
    std::vector<int64_t> out;
    for (auto& x : t->elements) out.push_back(require_int(x, role, use));
    return out;
  }

  std::vector<int64_t> shape_of(const TensorType& tt, const Span& where, const std::string& role) {
    std::vector<int64_t> out;
    for (auto& d : tt.shape) {
      Value v = eval(d);
      if (v.kind == Value::Kind::Unknown) refuse(v.why + ", and it decides " + role, where, v.help);
      if (!v.numeric()) refuse(role + " is not a number", where, kUseExecuted);
      out.push_back(v.kind == Value::Kind::Int ? v.i : static_cast<int64_t>(v.f));
    }
    return out;
  }

  View view_arg(const ExprPtr& e, const std::string& op) {
    Value v = lookup_value(e);
    if (v.kind != Value::Kind::View) refuse(op + ": the tensor argument is not a tensor this analysis knows", e->span,
                                            kUseExecuted);
    return v.view;
  }

  // The value of an operand (a Var's binding, else the expression evaluated).
  Value lookup_value(const ExprPtr& e) {
    if (const Var* v = as_var(e)) {
      auto it = env_.find(v);
      if (it != env_.end()) return it->second;
    }
    return eval(e);
  }

  // ---- expressions
  Value eval(const ExprPtr& e) {
    switch (e->kind) {
      case NodeKind::ConstInt: return Value::num(static_cast<const ConstInt*>(e.get())->value);
      case NodeKind::ConstBool: return Value::num(static_cast<const ConstBool*>(e.get())->value ? 1 : 0);
      case NodeKind::ConstFloat: return Value::real(static_cast<const ConstFloat*>(e.get())->value);
      case NodeKind::Var:
      case NodeKind::IterArg: return var(static_cast<const Var*>(e.get()));
      case NodeKind::BinaryExpr: return binary(*static_cast<const BinaryExpr*>(e.get()));
      case NodeKind::UnaryExpr: {
        auto* u = static_cast<const UnaryExpr*>(e.get());
        Value a = eval(u->a);
        if (a.kind == Value::Kind::Unknown) return a;
        if (u->op == UnaryOp::Not) return Value::num(a.as_double() == 0 ? 1 : 0);
        if (u->op == UnaryOp::BitNot) return Value::num(~a.i);   // an integer (the type rule)
        return a.kind == Value::Kind::Float ? Value::real(-a.f) : Value::num(-a.i);
      }
      case NodeKind::Cast: {
        auto* c = static_cast<const Cast*>(e.get());
        Value a = eval(c->value);
        auto* st = c->type->as<ScalarType>();
        if (a.kind == Value::Kind::Unknown || !st || !a.numeric()) return a;
        if (is_float(st->dtype)) return Value::real(a.as_double());
        if (st->dtype == DataType::BOOL) return Value::num(a.as_double() != 0 ? 1 : 0);
        return Value::num(a.kind == Value::Kind::Float ? static_cast<int64_t>(a.f) : a.i);
      }
      case NodeKind::MakeTuple: {
        Value t;
        t.kind = Value::Kind::Tuple;
        for (auto& x : static_cast<const MakeTuple*>(e.get())->elements) t.elems.push_back(eval(x));
        return t;
      }
      case NodeKind::TupleGetItem: {
        auto* g = static_cast<const TupleGetItem*>(e.get());
        Value t = eval(g->tuple);
        if (t.kind != Value::Kind::Tuple || g->index < 0 || static_cast<size_t>(g->index) >= t.elems.size())
          refuse("a tuple element this analysis cannot follow", e->span, kUseExecuted);
        return t.elems[static_cast<size_t>(g->index)];
      }
      case NodeKind::Call: return call(*static_cast<const Call*>(e.get()));
      case NodeKind::Submit: {
        auto* s = static_cast<const Submit*>(e.get());
        return task(*e, s->callee, s->args, s->arg_directions, s);
      }
      // Statements are not values (no `default:`: -Wswitch flags a new expression kind).
#define PYPTO_STMT_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
        break;
    }
    refuse(std::string("the static task graph does not model ") + to_string(e->kind), e->span, kUseExecuted);
  }

  Value var(const Var* v) {
    auto it = env_.find(v);
    if (it != env_.end()) return it->second;
    auto d = dim_vars_.find(v);
    const std::string& name = d != dim_vars_.end() ? d->second : v->name;
    if (auto k = inputs_.dims.find(name); k != inputs_.dims.end()) return Value::num(k->second);
    if (d != dim_vars_.end())
      return Value::unknown("'" + name + "' is known only when the program runs",
                            "give the dynamic dimension: task_graph(static=True, dims={\"" + name +
                                "\": N}) or pypto graph --static --dim " + name + "=N");
    refuse("'" + v->name + "' has no value here", v->span, kUseExecuted);
  }

  static int64_t floor_div(int64_t a, int64_t b) {
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
  }

  Value binary(const BinaryExpr& b) {
    Value x = eval(b.a), y = eval(b.b);
    if (x.kind == Value::Kind::Unknown) return x;
    if (y.kind == Value::Kind::Unknown) return y;
    if (!x.numeric() || !y.numeric()) refuse("arithmetic on a value that is not a number", b.span, kUseExecuted);
    const bool ints = x.kind == Value::Kind::Int && y.kind == Value::Kind::Int;
    const double a = x.as_double(), c = y.as_double();
    auto zero_check = [&]() {
      if (c == 0) refuse("division by zero", b.span, "check the divisor");
    };
    switch (b.op) {
      case BinaryOp::Add: return ints ? Value::num(x.i + y.i) : Value::real(a + c);
      case BinaryOp::Sub: return ints ? Value::num(x.i - y.i) : Value::real(a - c);
      case BinaryOp::Mul: return ints ? Value::num(x.i * y.i) : Value::real(a * c);
      case BinaryOp::Div: zero_check(); return Value::real(a / c);
      case BinaryOp::FloorDiv: zero_check(); return ints ? Value::num(floor_div(x.i, y.i)) : Value::real(std::floor(a / c));
      case BinaryOp::Mod:
        zero_check();
        return ints ? Value::num(x.i - floor_div(x.i, y.i) * y.i) : Value::real(a - std::floor(a / c) * c);
      case BinaryOp::Min: return ints ? Value::num(std::min(x.i, y.i)) : Value::real(std::min(a, c));
      case BinaryOp::Max: return ints ? Value::num(std::max(x.i, y.i)) : Value::real(std::max(a, c));
      case BinaryOp::Eq: return Value::num(ints ? x.i == y.i : a == c);
      case BinaryOp::Ne: return Value::num(ints ? x.i != y.i : a != c);
      case BinaryOp::Lt: return Value::num(ints ? x.i < y.i : a < c);
      case BinaryOp::Le: return Value::num(ints ? x.i <= y.i : a <= c);
      case BinaryOp::Gt: return Value::num(ints ? x.i > y.i : a > c);
      case BinaryOp::Ge: return Value::num(ints ? x.i >= y.i : a >= c);
      case BinaryOp::And: return Value::num(a != 0 && c != 0);
      case BinaryOp::Or: return Value::num(a != 0 || c != 0);
      // & | ^ << >>: integers only (the type rule); a shift as pto2_shl / pto2_shr computes it
      case BinaryOp::BitAnd: return Value::num(x.i & y.i);
      case BinaryOp::BitOr: return Value::num(x.i | y.i);
      case BinaryOp::BitXor: return Value::num(x.i ^ y.i);
      case BinaryOp::Shl:
      case BinaryOp::Shr:
        if (y.i < 0) refuse("a negative shift count", b.span, "check the count");
        if (b.op == BinaryOp::Shl) return Value::num(y.i >= 64 ? 0 : static_cast<int64_t>(static_cast<uint64_t>(x.i) << y.i));
        return Value::num(x.i >> (y.i >= 63 ? 63 : y.i));
    }
    refuse("an operator this analysis does not know", b.span, kUseExecuted);
  }

  // ---- operations
  Value call(const Call& c) {
    if (!c.is_op) return task(c, c.callee, c.args, c.arg_directions, nullptr);
    const std::string& op = c.callee;
    if (op == "tensor.create") {
      auto* tt = c.type->as<TensorType>();
      if (!tt) refuse("tensor.create without a tensor type", c.span, kUseExecuted);
      Value x;
      x.kind = Value::Kind::View;
      x.view.storage = next_storage_++;
      x.view.shape = shape_of(*tt, c.span, "the shape of this tensor");
      x.view.strides = row_major(x.view.shape);
      const bool* manual = attr_get<bool>(c.attrs, "manual_dep");
      x.view.manual_dep = manual && *manual;
      return x;
    }
    if (op == "tensor.slice" || op == "tensor.view") {
      View v = view_arg(c.args.at(0), op);
      std::vector<int64_t> shape = require_ints(c.args.at(1), "the shape of this view", c.span);
      std::vector<int64_t> offs = c.args.size() > 2 ? require_ints(c.args[2], "the offset of this view", c.span)
                                                    : std::vector<int64_t>(shape.size(), 0);
      if (shape.size() != v.shape.size() || offs.size() != v.shape.size())
        refuse(op + " of another rank than its tensor", c.span, kUseExecuted);
      // Shapes clamped to the source's extent as the runtime does (anchor §18): an overhang is
      // trimmed, an offset at or past the end gives an empty view.
      for (size_t i = 0; i < offs.size(); ++i) {
        if (offs[i] < 0 || shape[i] < 0) refuse(op + " with a negative offset or shape (the run fails here)", c.span,
                                                "slice within the tensor");
        shape[i] = offs[i] >= v.shape[i] ? 0 : std::min(shape[i], v.shape[i] - offs[i]);
        v.offset += offs[i] * v.strides[i];
      }
      v.shape = shape;
      Value x;
      x.kind = Value::Kind::View;
      x.view = v;
      return x;
    }
    if (op == "tensor.transpose") {
      View v = view_arg(c.args.at(0), op);
      int64_t a = require_int(c.args.at(1), "the transposed axis", c.span), b = require_int(c.args.at(2), "the transposed axis", c.span);
      const int64_t rank = static_cast<int64_t>(v.shape.size());
      if (a < 0) a += rank;
      if (b < 0) b += rank;
      if (a < 0 || b < 0 || a >= rank || b >= rank) refuse("tensor.transpose of an axis out of range", c.span, kUseExecuted);
      std::swap(v.shape[static_cast<size_t>(a)], v.shape[static_cast<size_t>(b)]);
      std::swap(v.strides[static_cast<size_t>(a)], v.strides[static_cast<size_t>(b)]);
      Value x;
      x.kind = Value::Kind::View;
      x.view = v;
      return x;
    }
    if (op == "tensor.reshape") {
      View v = view_arg(c.args.at(0), op);
      if (v.strides != row_major(v.shape))
        refuse("tensor.reshape of a view that is not contiguous (the run fails here)", c.span, "reshape a contiguous tensor");
      v.shape = require_ints(c.args.at(1), "the shape of this reshape", c.span);
      v.strides = row_major(v.shape);
      Value x;
      x.kind = Value::Kind::View;
      x.view = v;
      return x;
    }
    if (op == "tensor.assemble") return lookup_value(c.args.at(0));   // in place: the source is a view of the target
    if (op == "tensor.dim") {
      const View& v = view_arg(c.args.at(0), op);
      int64_t axis = require_int(c.args.at(1), "the axis of tensor.dim", c.span);
      if (axis < 0) axis += static_cast<int64_t>(v.shape.size());
      if (axis < 0 || static_cast<size_t>(axis) >= v.shape.size()) refuse("tensor.dim of an axis out of range", c.span, kUseExecuted);
      return Value::num(v.shape[static_cast<size_t>(axis)]);
    }
    if (op == "tensor.read" || op == "tensor.write") {
      const View& v = view_arg(c.args.at(0), op);
      std::vector<int64_t> idx = require_ints(c.args.at(1), "the element " + op + " accesses", c.span);
      wait_for_element(v, idx, c.span);
      if (op == "tensor.write") return lookup_value(c.args.at(0));
      return Value::unknown("the value read by tensor.read at " + site_of(c.span) +
                                " (a task's output, read while the program runs) is known only then",
                            std::string("the task graph depends on the data here; ") + kUseExecuted);
    }
    if (op == "system.task_invalid") return Value::ids(1);
    if (op == "system.assert") {   // no task: its condition is evaluated (a tensor.read in it waits)
      eval(c.args.at(0));
      return Value::num(0);
    }
    if (op == "system.task_dummy") return barrier(c);
    if (op == "array.create") {
      const int64_t* n = attr_get<int64_t>(c.attrs, "size");
      if (!n || *n <= 0) refuse("array.create without a size", c.span, kUseExecuted);
      auto* at = c.type->as<ArrayType>();
      if (at && at->dtype == DataType::TASK_ID) return Value::ids(static_cast<size_t>(*n));
      return Value::unknown("an array of scalars is known only when the program runs", kUseExecuted);
    }
    if (op == "array.get_element" || op == "array.update_element") {
      Value arr = lookup_value(c.args.at(0));
      if (arr.kind != Value::Kind::Ids) {
        if (op == "array.get_element") return Value::unknown("an array element is known only when the program runs", kUseExecuted);
        return arr;
      }
      int64_t k = require_int(c.args.at(1), "the slot of this array access", c.span);
      if (k < 0 || static_cast<size_t>(k) >= arr.slots.size()) refuse("array slot out of range", c.span, kUseExecuted);
      if (op == "array.get_element") {
        Value x = Value::ids(1);
        x.slots[0] = arr.slots[static_cast<size_t>(k)];
        return x;
      }
      arr.slots[static_cast<size_t>(k)] = lookup_value(c.args.at(2)).all_ids();
      return arr;
    }
    refuse("operation " + op + " in an orchestration: the static task graph does not model it", c.span, kUseExecuted);
  }

  // get_tensor_data / set_tensor_data: a wait node after the element's writers and every
  // untracked writer so far, before every later node.
  void wait_for_element(const View& v, const std::vector<int64_t>& idx, const Span& where) {
    const int n = add_node(GraphNode::Kind::Wait, where);
    if (idx.size() == v.shape.size()) {
      View e = v;
      for (size_t i = 0; i < idx.size(); ++i) {
        e.offset += idx[i] * v.strides[i];
        e.shape[i] = 1;
      }
      std::vector<int> writers;
      tracker_.writers_of(e.storage, region_of(e), writers);
      for (int w : writers) nodes_[static_cast<size_t>(n)].add_pred(w, kWaitEdge);
    }
    for (int w : untracked_writers_) nodes_[static_cast<size_t>(n)].add_pred(w, kWaitEdge);
    untracked_writers_.clear();
    last_sync_ = n;
  }

  int add_node(GraphNode::Kind kind, const Span& where) {
    if (nodes_.size() >= kMaxNodes)
      refuse("the graph has more than " + std::to_string(kMaxNodes) + " nodes, more than it draws", where, kSmallerValues);
    GraphNode g;
    g.kind = kind;
    if (kind != GraphNode::Kind::Wait) g.task = ++tasks_;
    if (last_sync_ >= 0) g.add_pred(last_sync_, kWaitEdge);
    nodes_.push_back(std::move(g));
    return static_cast<int>(nodes_.size()) - 1;
  }

  void add_explicit(int n, const std::vector<ExprPtr>& deps) {
    for (auto& d : deps)
      for (int p : lookup_value(d).all_ids()) nodes_[static_cast<size_t>(n)].add_pred(p, kExplicitEdge);
  }

  Value barrier(const Call& c) {
    const std::vector<ExprPtr>& edges = c.manual_dep_edges;
    std::set<int> preds;
    for (auto& d : edges)
      for (int p : lookup_value(d).all_ids()) preds.insert(p);
    Value id = Value::ids(1);
    // Every edge invalid: not submitted (HOST: submit_barrier of no dependency never is).
    if ((host_ || !edges.empty()) && preds.empty()) return id;
    const int n = add_node(GraphNode::Kind::Barrier, c.span);
    for (int p : preds) nodes_[static_cast<size_t>(n)].add_pred(p, kExplicitEdge);
    id.slots[0].insert(n);
    return id;
  }

  // The kernels of a Group (one AIC, one AIV at most), by call order (emit_tasks.cpp).
  std::pair<std::string, std::string> group_kernels(const Function& group) {
    std::string aic, aiv;
    std::function<void(const StmtPtr&)> walk = [&](const StmtPtr& s) {
      for (auto& st : flatten_stmts(s)) {
        const Expr* e = nullptr;
        if (auto* a = st->as<AssignStmt>()) e = a->value.get();
        if (auto* ev = st->as<EvalStmt>()) e = ev->expr.get();
        if (auto* call = e ? e->as<Call>() : nullptr; call && !call->is_op) {
          FunctionPtr k = program_.get(call->callee);
          if (k && k->is_kernel()) (StampedCoreType(*k) == CoreType::AIC ? aic : aiv) = call->callee;
        }
        if (auto* rs = st->as<RuntimeScopeStmt>()) walk(rs->body);
      }
    };
    walk(group.body);
    return {aic, aiv};
  }

  Value task(const Expr& e, const std::string& callee, const std::vector<ExprPtr>& args,
             const std::vector<ArgDirection>& dirs, const Submit* sub) {
    FunctionPtr f = program_.get(callee);
    if (host_) return next_level_task(e, f, callee, args, sub);
    if (!f || !(f->is_kernel() || f->type == FunctionType::Group))
      refuse("call of '" + callee + "': the static task graph follows kernel and Group calls only", e.span, kUseExecuted);
    const int n = add_node(GraphNode::Kind::Task, e.span);
    {
      GraphNode& g = nodes_[static_cast<size_t>(n)];
      if (f->type == FunctionType::Group) {
        auto [aic, aiv] = group_kernels(*f);
        g.label = !aic.empty() && !aiv.empty() ? aic + " + " + aiv : !aic.empty() ? aic : !aiv.empty() ? aiv : callee;
        g.core = "MIXED";
      } else {
        g.label = callee;
        g.core = StampedCoreType(*f) == CoreType::AIC ? "AIC" : "AIV";
      }
      g.where = site_of(e.span);
      g.predicated = sub && sub->predicate;
    }
    if (sub) add_explicit(n, sub->deps);
    add_explicit(n, compiler_dep_edges(e));
    const bool manual = manual_.back();
    bool untracked_write = false;
    std::vector<int> deps;
    auto record = [&](const View& v, bool read, bool write, bool tracked) {
      if (tracked) tracker_.access(v.storage, region_of(v), read, write, n, deps);
      else untracked_write |= write;
    };
    std::vector<Value> arg_values;
    for (size_t i = 0; i < args.size(); ++i) {
      arg_values.push_back(lookup_value(args[i]));
      if (!args[i]->type->is<TensorType>()) continue;
      const ArgDirection d = i < dirs.size() ? dirs[i] : ArgDirection::In;
      if (arg_values.back().kind != Value::Kind::View)
        refuse("a tensor argument this analysis cannot follow", args[i]->span, kUseExecuted);
      const View& v = arg_values.back().view;
      const bool write = d != ArgDirection::In;
      const bool read = d == ArgDirection::In || d == ArgDirection::InOut || d == ArgDirection::NoDep;
      record(v, read, write, !manual && d != ArgDirection::NoDep && !v.manual_dep);
    }
    // Trailing Out parameters a pl.submit left out: allocated by the runtime, one storage each.
    std::vector<Value> runtime_outs(f->params.size());
    for (size_t i = args.size(); i < f->params.size(); ++i) {
      auto* tt = f->params[i]->type->as<TensorType>();
      if (!tt) refuse("call of '" + callee + "' omits a parameter that is not a tensor", e.span, kUseExecuted);
      Value x;
      x.kind = Value::Kind::View;
      x.view.storage = next_storage_++;
      x.view.shape = shape_of(*tt, e.span, "the shape of an output the runtime allocates");
      x.view.strides = row_major(x.view.shape);
      record(x.view, false, true, !manual);
      runtime_outs[i] = x;
    }
    if (sub && sub->predicate) predicate_access(*sub, manual, record);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int p : deps)
      if (p != n) nodes_[static_cast<size_t>(n)].add_pred(p, kAutoEdge);
    if (untracked_write) untracked_writers_.push_back(n);

    // Results: the Out/InOut arguments the callee returns (plus the TaskId of a submission).
    std::vector<Value> results;
    std::vector<int> rets = ExplicitReturnedParamIndices(*f);
    for (size_t r = 0; r < f->return_types.size(); ++r) {
      const int p = r < rets.size() ? rets[r] : -1;
      if (p < 0) results.push_back(Value::unknown("a kernel result that is not one of its parameters", kUseExecuted));
      else if (static_cast<size_t>(p) < arg_values.size()) results.push_back(arg_values[static_cast<size_t>(p)]);
      else results.push_back(runtime_outs[static_cast<size_t>(p)]);
    }
    if (sub) {
      Value id = Value::ids(1);
      id.slots[0].insert(n);
      results.push_back(id);
    } else if (results.size() == 1) {
      return results[0];
    }
    Value t;
    t.kind = Value::Kind::Tuple;
    t.elems = std::move(results);
    return t;
  }

  // HOST: a submission of a chip-level orchestration is a next-level task of the L3 runtime,
  // after its deps= (add_dep_wait) and after the previous task of the same target (a chain
  // edge); tensors add no order at this level.
  Value next_level_task(const Expr& e, const FunctionPtr& f, const std::string& callee, const std::vector<ExprPtr>& args,
                        const Submit* sub) {
    if (!f || f->type != FunctionType::Orchestration || f->level == Level::HOST)
      refuse("'" + callee + "' is not a chip-level orchestration: a HOST program submits those only", e.span, kUseExecuted);
    const int n = add_node(GraphNode::Kind::Task, e.span);
    GraphNode& g = nodes_[static_cast<size_t>(n)];
    g.label = callee;
    g.core = "CHIP";
    g.where = site_of(e.span);
    if (sub) add_explicit(n, sub->deps);
    add_explicit(n, compiler_dep_edges(e));
    auto last = last_of_target_.find(callee);
    if (last != last_of_target_.end()) nodes_[static_cast<size_t>(n)].add_pred(last->second, kChainEdge);
    last_of_target_[callee] = n;
    std::vector<Value> results;
    std::vector<int> rets = ExplicitReturnedParamIndices(*f);
    for (size_t r = 0; r < f->return_types.size(); ++r) {
      const int p = r < rets.size() ? rets[r] : -1;
      if (p >= 0 && static_cast<size_t>(p) < args.size()) results.push_back(lookup_value(args[static_cast<size_t>(p)]));
      else results.push_back(Value::unknown("a next-level task's result that is not one of its arguments", kUseExecuted));
    }
    if (sub) {
      Value id = Value::ids(1);
      id.slots[0].insert(n);
      results.push_back(id);
    } else if (results.size() == 1) {
      return results[0];
    }
    Value t;
    t.kind = Value::Kind::Tuple;
    t.elems = std::move(results);
    return t;
  }

  // The predicate reads one element of a tensor at dispatch: tracked like any other read.
  template <class Record>
  void predicate_access(const Submit& s, bool manual, Record& record) {
    auto* cmp = s.predicate->as<BinaryExpr>();
    if (!cmp) return;
    for (const ExprPtr& side : {cmp->a, cmp->b}) {
      const Expr* x = side.get();
      if (auto* c = x->as<Cast>()) x = c->value.get();
      auto* read = x->as<Call>();
      if (!read || !read->is_op || read->callee != "tensor.read") continue;
      View e = view_arg(read->args.at(0), "predicate");
      std::vector<int64_t> idx = require_ints(read->args.at(1), "the element the predicate reads", read->span);
      if (idx.size() != e.shape.size()) return;
      for (size_t i = 0; i < idx.size(); ++i) {
        e.offset += idx[i] * e.strides[i];
        e.shape[i] = 1;
      }
      record(e, true, false, !manual && !e.manual_dep);
      return;
    }
  }

  // ---- statements: returns the values of the YieldStmt that ends the block, if any
  std::optional<std::vector<Value>> run(const StmtPtr& body) {
    if (!body) return std::nullopt;
    for (const StmtPtr& s : flatten_stmts(body)) {
      switch (s->kind) {
        case NodeKind::AssignStmt: {
          auto* a = static_cast<const AssignStmt*>(s.get());
          env_[a->var.get()] = eval(a->value);
          break;
        }
        case NodeKind::EvalStmt: eval(static_cast<const EvalStmt*>(s.get())->expr); break;
        case NodeKind::YieldStmt: {
          std::vector<Value> out;
          for (auto& v : static_cast<const YieldStmt*>(s.get())->values) out.push_back(eval(v));
          return out;
        }
        case NodeKind::ReturnStmt: return std::nullopt;
        case NodeKind::ForStmt: loop(*static_cast<const ForStmt*>(s.get())); break;
        case NodeKind::IfStmt: {
          auto* i = static_cast<const IfStmt*>(s.get());
          const bool taken = require_int(i->cond, "which branch runs", i->span) != 0;
          auto out = run(taken ? i->then_body : i->else_body);
          for (size_t k = 0; out && k < i->return_vars.size() && k < out->size(); ++k) env_[i->return_vars[k].get()] = (*out)[k];
          break;
        }
        case NodeKind::RuntimeScopeStmt: {
          auto* r = static_cast<const RuntimeScopeStmt*>(s.get());
          manual_.push_back(r->mode == RuntimeScopeMode::Manual);
          auto out = run(r->body);
          manual_.pop_back();
          if (out) return out;
          break;
        }
        // flatten_stmts leaves no SeqStmts; pl.at scopes are outlined before the graph is read
        // (no `default:`: -Wswitch flags a new statement kind).
        case NodeKind::SeqStmts:
        case NodeKind::ScopeStmt:
#define PYPTO_EXPR_NODE(Name) case NodeKind::Name:
#include "pypto/ir/node_kinds.def"
          refuse(std::string("the static task graph does not model ") + to_string(s->kind), s->span, kUseExecuted);
      }
    }
    return std::nullopt;
  }

  // Iteration `trip` of a pl.parallel loop of `trips` iterations yields `out` into its slots of
  // the carry `arr`, as the generators do (task_ids.cpp emit_carry_yield): each iteration owns
  // size / trips slots [trip * per, (trip + 1) * per); an array of `per` TaskIds (an inner
  // pl.parallel's) is copied slot by slot, one TaskId (or an if's phi of one) fills them all.
  // (Putting an inner array's ids into slot `trip` alone left the other slots holding the
  // value from before the loop: the task after three nested levels waited on every phase.)
  static void fill_slots(Value& arr, uint64_t trip, uint64_t trips, const Value& out) {
    const size_t per = std::max<size_t>(trips ? arr.slots.size() / static_cast<size_t>(trips) : 0, 1);
    const size_t first = static_cast<size_t>(trip) * per;
    for (size_t j = 0; j < per && first + j < arr.slots.size(); ++j)
      arr.slots[first + j] = out.slots.size() == per ? out.slots[j] : out.all_ids();
  }

  // Iterations of range(start, stop, step), step != 0, computed without overflow.
  static uint64_t trip_count(int64_t start, int64_t stop, int64_t step) {
    if (step > 0 ? start >= stop : start <= stop) return 0;
    const __int128 span = step > 0 ? __int128(stop) - start : __int128(start) - stop;
    const __int128 mag = step > 0 ? __int128(step) : -__int128(step);
    return static_cast<uint64_t>((span + mag - 1) / mag);
  }

  void loop(const ForStmt& s) {
    const int64_t start = require_int(s.start, "how often this loop runs", s.span);
    const int64_t stop = require_int(s.stop, "how often this loop runs", s.span);
    const int64_t step = require_int(s.step, "how often this loop runs", s.span);
    if (step == 0) refuse("a loop with step 0", use_site(s.step, s.span), "use a non-zero step");
    const uint64_t trips = trip_count(start, stop, step);
    if (trips > kMaxLoopIterations - iterations_)
      refuse("this loop runs " + std::to_string(trips) + " times; the static task graph follows at most " +
                 std::to_string(kMaxLoopIterations) + " loop iterations in all (" + std::to_string(iterations_) +
                 " before this loop)", s.span, kSmallerValues);
    iterations_ += trips;
    std::vector<Value> carried;
    for (auto& a : s.iter_args) carried.push_back(eval(a->init));
    // pl.parallel: every iteration sees the loop-entry value of a TaskId slot carry and
    // writes its own slot; the loop's result holds every slot.
    const bool parallel = s.for_kind == ForKind::Parallel;
    std::vector<Value> slotted(carried.size());
    std::vector<bool> is_slotted(carried.size(), false);
    for (size_t k = 0; k < carried.size(); ++k) {
      if (!parallel || k >= s.carries.size() || s.carries[k].slots <= 0 || carried[k].kind != Value::Kind::Ids) continue;
      is_slotted[k] = true;
      const size_t n = static_cast<size_t>(s.carries[k].slots);
      Value init = Value::ids(n);
      for (size_t j = 0; j < n; ++j)
        init.slots[j] = carried[k].slots.size() == n ? carried[k].slots[j] : carried[k].all_ids();
      slotted[k] = init;
    }
    const std::vector<Value> entry = carried;
    for (uint64_t trip = 0; trip < trips; ++trip) {   // by trips: i += step could pass INT64_MAX
      env_[s.loop_var.get()] = Value::num(static_cast<int64_t>(__int128(start) + __int128(trip) * step));
      for (size_t k = 0; k < s.iter_args.size(); ++k) env_[s.iter_args[k].get()] = is_slotted[k] ? entry[k] : carried[k];
      auto out = run(s.body);
      if (!out) continue;
      for (size_t k = 0; k < out->size() && k < carried.size(); ++k) {
        if (is_slotted[k]) fill_slots(slotted[k], trip, trips, (*out)[k]);
        else carried[k] = (*out)[k];
      }
    }
    for (size_t k = 0; k < s.return_vars.size() && k < carried.size(); ++k)
      env_[s.return_vars[k].get()] = is_slotted[k] ? slotted[k] : carried[k];
  }

  const Program& program_;
  const StaticGraphInputs& inputs_;
  const bool host_;                                      // a HOST orchestration (L3 runtime)
  std::unordered_map<std::string, int> last_of_target_;  // HOST: the last task per target
  std::unordered_map<const Var*, std::string> dim_vars_;
  std::unordered_map<const Var*, Value> env_;
  std::vector<bool> manual_;
  std::vector<GraphNode> nodes_;
  std::vector<int> untracked_writers_;
  Tracker tracker_;
  int last_sync_ = -1;
  int tasks_ = 0;
  int next_storage_ = 0;
  uint64_t iterations_ = 0;   // loop iterations interpreted (kMaxLoopIterations)
};

}  // namespace

std::string StaticTaskGraphDot(const Program& prepared, const std::string& entry, const StaticGraphInputs& inputs) {
  FunctionPtr fn = prepared.get(entry);
  if (!fn) throw UserError("no function '" + entry + "' in program '" + prepared.name + "'", prepared.span, "");
  if (fn->type != FunctionType::Orchestration)
    throw UserError("'" + entry + "' is not an orchestration function: it has no task graph", fn->span, "");
  Interpreter interp(prepared, inputs, fn->level == Level::HOST);
  interp.run_entry(*fn);
  return interp.dot();
}

}  // namespace pypto::transforms
