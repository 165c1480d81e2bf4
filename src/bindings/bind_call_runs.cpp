// `ir.scan_call_runs` / `ir.CallRun`: the DSL parser's fast path for long straight-line runs of
// kernel calls (python/pypto/frontend/call_runs.py has the contract and the fallbacks).
//
// A generated orchestration is mostly lines like `t3 = self.k3(t2, b, 3, t3)`. Python's own
// parser spends ~15 us on each, and walking its `ast` in Python as much again, so runs of such
// lines are recognised here before `ast.parse` (which gets them masked: the first line becomes
// `pass`, the others blank), and their IR is built here from the parsed lines, one C++ call per
// run. A statement this code does not fully check (unknown name, argument of another kind, a
// tensor shape check not yet passed for that slot, ...) is left to the ordinary Python parser:
// `build` stops there and returns its index.
//
//   masked, runs = ir.scan_call_runs(lines, first_line=1, min_run=4)   # (None, {}) if none
//   run = runs[line]                  # ir.CallRun of the run whose first line is `line`
//   k = run.build(0, env...)          # statements 0..k-1 emitted; k == len(run) when all
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bindings.h"
#include "ir_casters.h"
#include "pypto/ir/expr.h"
#include "pypto/ir/printer.h"
#include "pypto/ir/stmt.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {
namespace {

using namespace pypto::ir;

struct RunArg {
  std::string name;     // empty for an integer literal
  int64_t value = 0;
  int col = 0, end = 0;  // 0-based columns on the line
};

struct CallLine {
  int line = 0, indent = 0, end = 0;  // `end`: 0-based column just past the ')'
  std::string target, callee;
  std::vector<RunArg> args;
};

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }

// An identifier at s[*i] (advances *i), or "" when there is none.
std::string_view ident(std::string_view s, size_t* i) {
  size_t b = *i;
  if (b >= s.size() || !is_ident_start(s[b])) return {};
  size_t e = b + 1;
  while (e < s.size() && is_ident_char(s[e])) ++e;
  *i = e;
  return s.substr(b, e - b);
}

// `<spaces><target> = self.<callee>(<args>)` with optional "\n", args names or decimal ints
// (no leading zeros, at most INT64_MAX) separated by commas, spaces around them allowed.
bool parse_call_line(std::string_view s, int line, CallLine* out) {
  if (!s.empty() && s.back() == '\n') s.remove_suffix(1);
  size_t i = 0;
  while (i < s.size() && s[i] == ' ') ++i;
  if (i == 0) return false;
  CallLine c;
  c.line = line;
  c.indent = static_cast<int>(i);
  std::string_view target = ident(s, &i);
  if (target.empty() || IsPythonKeyword(target) || target == "self") return false;
  static constexpr std::string_view kMid = " = self.";
  if (s.substr(i, kMid.size()) != kMid) return false;
  i += kMid.size();
  std::string_view callee = ident(s, &i);
  if (callee.empty() || IsPythonKeyword(callee) || i >= s.size() || s[i] != '(' || s.back() != ')') return false;
  size_t inner_b = i + 1, inner_e = s.size() - 1;
  std::string_view inner = s.substr(inner_b, inner_e - inner_b);
  for (char ch : inner)
    if (!(is_ident_char(ch) || ch == ',' || ch == ' ')) return false;
  if (inner.find_first_not_of(' ') == std::string_view::npos) {
    if (!inner.empty()) return false;  // `f( )`
  } else {
    size_t p = inner_b;
    while (true) {
      while (p < inner_e && s[p] == ' ') ++p;
      RunArg a;
      a.col = static_cast<int>(p);
      if (p < inner_e && is_ident_start(s[p])) {
        std::string_view name = ident(s, &p);
        if (IsPythonKeyword(name)) return false;
        a.name.assign(name);
      } else if (p < inner_e && s[p] >= '0' && s[p] <= '9') {
        size_t b = p;
        while (p < inner_e && s[p] >= '0' && s[p] <= '9') ++p;
        if (p < inner_e && is_ident_char(s[p])) return false;  // `1x`
        if (s[b] == '0' && p - b > 1) return false;            // `01` is a syntax error
        if (p - b > 19) return false;
        uint64_t v = 0;
        for (size_t q = b; q < p; ++q) v = v * 10 + static_cast<uint64_t>(s[q] - '0');
        if (v > static_cast<uint64_t>(INT64_MAX)) return false;
        a.value = static_cast<int64_t>(v);
      } else {
        return false;  // empty argument (`f(a,,b)`, `f(a, )`)
      }
      a.end = static_cast<int>(p);
      c.args.push_back(std::move(a));
      while (p < inner_e && s[p] == ' ') ++p;
      if (p == inner_e) break;
      if (s[p] != ',') return false;
      ++p;
    }
  }
  c.target.assign(target);
  c.callee.assign(callee);
  c.end = static_cast<int>(s.size());
  *out = std::move(c);
  return true;
}

std::string_view str_view(PyObject* o) {
  Py_ssize_t n = 0;
  const char* d = PyUnicode_AsUTF8AndSize(o, &n);
  if (!d) {
    PyErr_Clear();
    return {};
  }
  return {d, static_cast<size_t>(n)};
}

// The Python object bound to `name` in the innermost frame that has it (ctx.lookup), or null.
PyObject* lookup(const nb::list& frames, PyObject* name) {
  for (Py_ssize_t f = PyList_GET_SIZE(frames.ptr()) - 1; f >= 0; --f) {
    PyObject* v = PyDict_GetItemWithError(PyList_GET_ITEM(frames.ptr(), f), name);
    if (v) return v;
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return nullptr;
    }
  }
  return nullptr;
}

bool to_expr(nb::handle h, ExprPtr* out) {
  try {
    *out = nb::cast<ExprPtr>(h);
    return *out != nullptr;
  } catch (const std::exception&) {
    PyErr_Clear();
    return false;
  }
}

bool is_var(const Expr& e) { return e.kind == NodeKind::Var || e.kind == NodeKind::IterArg; }

class CallRun {
 public:
  std::vector<CallLine> calls;

  size_t size() const { return calls.size(); }
  int indent() const { return calls.empty() ? 0 : calls[0].indent; }
  int line(size_t i) const { return calls.at(i).line; }
  int last_end() const { return calls.empty() ? 0 : calls.back().end; }

  nb::list targets() const {
    nb::list out;
    for (const auto& c : calls) out.append(c.target);
    return out;
  }

  // Emit statements start.. of the run into the parser state (the arguments are the pieces of
  // FnCtx this needs; call_runs.py documents them); returns the index of the first statement
  // not emitted (size() when all were).
  size_t build(size_t start, const std::string& file, const nb::list& lines, int line_offset, const nb::list& frames,
               nb::list block, nb::dict hidden, nb::dict defs, const nb::dict& sigs,
               const std::string& fn_name, bool is_orch, const nb::list& dump_tags, const nb::list& own_params) const {
    std::vector<const Expr*> tags;
    for (nb::handle t : dump_tags) {
      ExprPtr e;
      if (to_expr(t, &e)) tags.push_back(e.get());
    }
    std::vector<std::pair<const Expr*, bool>> params;  // (own parameter, is pl.In)
    for (nb::handle p : own_params) {
      ExprPtr e;
      nb::tuple pt = nb::borrow<nb::tuple>(p);
      if (to_expr(pt[0], &e)) params.emplace_back(e.get(), nb::cast<bool>(pt[1]));
    }
    size_t i = start;
    SharedText file_text(file);   // shared by every span of the run
    for (; i < calls.size(); ++i) {
      if (!build_one(calls[i], file_text, lines, line_offset, frames, block, hidden, defs, sigs, fn_name, is_orch, tags,
                     params))
        break;
    }
    return i;
  }

 private:
  // view_root + _check_not_read_only of calls.py: would passing `e` for a written parameter
  // write a pl.In parameter of the function (or a view of one)?
  static bool writes_read_only(ExprPtr e, const nb::dict& defs, const std::vector<std::pair<const Expr*, bool>>& params) {
    for (int seen = 0; e && is_var(*e) && seen < 10000; ++seen) {
      PyObject* v = PyDict_GetItemWithError(defs.ptr(), nb::cast(e).ptr());
      if (!v) {
        PyErr_Clear();
        break;
      }
      ExprPtr d;
      if (!to_expr(v, &d)) break;
      if (auto* call = d->as<Call>(); call && call->callee == "tensor.slice" && !call->args.empty()) {
        e = call->args[0];
      } else if (is_var(*d)) {
        e = d;
      } else {
        break;
      }
    }
    for (const auto& [q, is_in] : params)
      if (q == e.get()) return is_in;
    return false;
  }

  // The text of 1-based `file_line` without trailing newlines ("" past the end).
  static SharedText line_text(const nb::list& lines, int file_line) {
    if (file_line <= 0 || file_line > static_cast<int>(PyList_GET_SIZE(lines.ptr()))) return {};
    std::string_view s = str_view(PyList_GET_ITEM(lines.ptr(), file_line - 1));
    while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
    return SharedText(std::string(s));
  }

  static Span span(const SharedText& file, const SharedText& text, int file_line, int col, int end) {
    return Span{file, file_line, col + 1, file_line, end + 1, text};
  }

  bool build_one(const CallLine& c, const SharedText& file, const nb::list& lines, int line_offset,
                 const nb::list& frames, nb::list block, nb::dict hidden, nb::dict defs,
                 const nb::dict& sigs, const std::string& fn_name, bool is_orch, const std::vector<const Expr*>& tags,
                 const std::vector<std::pair<const Expr*, bool>>& params) const {
    try {
      if (c.callee == fn_name) return false;
      PyObject* sig_obj = PyDict_GetItemString(sigs.ptr(), c.callee.c_str());
      if (!sig_obj || sig_obj == Py_None) return false;
      // (param_types, writes, result type, checked_tensor_args): call_runs.py _sig_info.
      nb::tuple sig = nb::borrow<nb::tuple>(sig_obj);
      nb::list ptypes = nb::borrow<nb::list>(sig[0]);
      nb::list writes = nb::borrow<nb::list>(sig[1]);
      nb::handle result_obj = sig[2];
      nb::dict checked = nb::borrow<nb::dict>(sig[3]);
      if (result_obj.is_none() || nb::len(ptypes) != c.args.size()) return false;
      int file_line = c.line + line_offset;
      SharedText text = line_text(lines, file_line);   // shared by the statement's spans
      std::vector<ExprPtr> args;
      args.reserve(c.args.size());
      for (size_t k = 0; k < c.args.size(); ++k) {
        const RunArg& a = c.args[k];
        ExprPtr e;
        if (!a.name.empty()) {
          nb::str key(a.name.c_str(), a.name.size());
          PyObject* v = lookup(frames, key.ptr());
          if (!v || v == Py_None || !to_expr(v, &e)) return false;
        } else {
          e = ConstInt::make(a.value, DataType::INDEX, span(file, text, file_line, a.col, a.end));
        }
        TypePtr pt = nb::cast<TypePtr>(ptypes[k]);
        const TypePtr& et = e->type;
        if (!et || !pt || et->kind != pt->kind) return false;
        if (auto* s = et->as<ScalarType>()) {
          if (s->dtype == DataType::TASK_ID && pt->as<ScalarType>()->dtype != DataType::TASK_ID) return false;
        } else if (et->is<TensorType>()) {
          if (is_orch && !is_var(*e)) return false;
          // The dtype/shape check of this slot passed before for this very type object.
          nb::object et_obj = nb::cast(et);
          nb::object key = nb::make_tuple(static_cast<Py_ssize_t>(k), nb::steal(PyLong_FromVoidPtr(et_obj.ptr())));
          PyObject* seen = PyDict_GetItemWithError(checked.ptr(), key.ptr());
          if (!seen) {
            PyErr_Clear();
            return false;
          }
          if (seen != et_obj.ptr()) return false;
          if (is_orch && nb::cast<bool>(writes[k]) && writes_read_only(e, defs, params)) return false;
        }
        args.push_back(std::move(e));
      }
      int call_col = c.indent + static_cast<int>(c.target.size()) + 3;
      ExprPtr call = Call::make_func(c.callee, args, nb::cast<TypePtr>(result_obj), {},
                                     span(file, text, file_line, call_col, c.end), {});
      if (!tags.empty()) {
        std::vector<ExprPtr> marks;
        for (const auto& a : args)
          for (const Expr* t : tags)
            if (a.get() == t) {
              marks.push_back(a);
              break;
            }
        if (!marks.empty()) call = with_dump_vars(call, marks);
      }
      VarPtr v = Var::make(c.target, call->type,
                           span(file, text, file_line, c.indent, c.indent + static_cast<int>(c.target.size())));
      StmtPtr stmt = AssignStmt::make(v, call, span(file, text, file_line, c.indent, c.end));
      nb::object v_obj = nb::cast(v);
      block.append(nb::cast(stmt));
      nb::str name(c.target.c_str(), c.target.size());
      PyObject* inner = PyList_GET_ITEM(frames.ptr(), PyList_GET_SIZE(frames.ptr()) - 1);
      if (PyDict_SetItem(inner, name.ptr(), v_obj.ptr()) != 0) throw nb::python_error();
      if (PyDict_Contains(hidden.ptr(), name.ptr()) == 1) PyDict_DelItem(hidden.ptr(), name.ptr());
      defs[v_obj] = nb::cast(call);
      return true;
    } catch (const nb::python_error&) {
      throw;
    } catch (const std::exception&) {
      PyErr_Clear();
      return false;  // the ordinary parser reports it, located
    }
  }
};

// Runs of at least `min_run` consecutive call lines with one indentation in `lines` (line
// lines[0] is line `first_line` of the text ast.parse reads). Returns (masked text, {first line:
// CallRun}), or (None, {}) when there is no run or a line break is not "\n" (str.splitlines also
// splits at \r, \x0c, ...: then list indices and ast line numbers could differ).
nb::tuple scan_call_runs(const nb::list& lines, int first_line, int min_run) {
  Py_ssize_t n = PyList_GET_SIZE(lines.ptr());
  std::vector<std::string_view> text(static_cast<size_t>(n));
  Py_ssize_t with_newline = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* s = PyList_GET_ITEM(lines.ptr(), i);
    if (!PyUnicode_CheckExact(s)) return nb::make_tuple(nb::none(), nb::dict());
    if (PyUnicode_IS_ASCII(s)) text[static_cast<size_t>(i)] = str_view(s);
    std::string_view v = text[static_cast<size_t>(i)];
    if (!PyUnicode_IS_ASCII(s)) {
      Py_ssize_t len = PyUnicode_GET_LENGTH(s);
      with_newline += len > 0 && PyUnicode_READ_CHAR(s, len - 1) == '\n';
    } else {
      with_newline += !v.empty() && v.back() == '\n';
    }
  }
  if (with_newline < n - 1) return nb::make_tuple(nb::none(), nb::dict());
  std::vector<CallRun> runs;
  CallRun cur;
  auto close = [&]() {
    if (static_cast<int>(cur.calls.size()) >= min_run) runs.push_back(std::move(cur));
    cur.calls.clear();
  };
  for (Py_ssize_t i = 0; i < n; ++i) {
    std::string_view s = text[static_cast<size_t>(i)];
    CallLine c;
    if (s.find("= self.") == std::string_view::npos || !parse_call_line(s, static_cast<int>(i) + first_line, &c)) {
      close();
      continue;
    }
    if (!cur.calls.empty() && c.indent != cur.calls[0].indent) close();
    cur.calls.push_back(std::move(c));
  }
  close();
  if (runs.empty()) return nb::make_tuple(nb::none(), nb::dict());
  std::string masked;
  size_t r = 0;
  for (Py_ssize_t i = 0; i < n; ++i) {
    int line = static_cast<int>(i) + first_line;
    while (r < runs.size() && runs[r].calls.back().line < line) ++r;
    if (r < runs.size() && runs[r].calls.front().line <= line) {
      if (line == runs[r].calls.front().line) {
        masked.append(static_cast<size_t>(runs[r].indent()), ' ');
        masked += "pass\n";
      } else {
        masked += '\n';
      }
      continue;
    }
    PyObject* s = PyList_GET_ITEM(lines.ptr(), i);
    Py_ssize_t len = 0;
    const char* d = PyUnicode_AsUTF8AndSize(s, &len);
    if (!d) throw nb::python_error();
    masked.append(d, static_cast<size_t>(len));
  }
  nb::dict out;
  for (auto& run : runs) {
    int first = run.calls.front().line;
    out[nb::int_(first)] = nb::cast(std::move(run));
  }
  return nb::make_tuple(nb::str(masked.c_str(), masked.size()), out);
}

}  // namespace

void bind_call_runs(nb::module_& ir_module) {
  nb::class_<CallRun>(ir_module, "CallRun",
                      "A run of `x = self.k(names, ints)` lines masked before ast.parse (frontend/call_runs.py).")
      .def("__len__", &CallRun::size)
      .def_prop_ro("indent", &CallRun::indent, "Indentation (columns) of the run's lines.")
      .def_prop_ro("last_end", &CallRun::last_end, "0-based column just past the last line's ')'.")
      .def("line", &CallRun::line, "i"_a, "Text line of statement i.")
      .def_prop_ro("targets", &CallRun::targets, "The names the run binds, in order.")
      .def("build", &CallRun::build, "start"_a, "file"_a, "lines"_a, "line_offset"_a, "frames"_a, "block"_a,
           "hidden"_a, "defs"_a, "sigs"_a, "fn_name"_a, "is_orch"_a, "dump_tags"_a, "own_params"_a,
           "Emit statements start.. into the parser state; returns the index of the first one not emitted.");
  ir_module.def("scan_call_runs", &scan_call_runs, "lines"_a, "first_line"_a = 1, "min_run"_a = 4,
                "(masked text, {first line: CallRun}) of the runs of kernel-call lines, or (None, {}).");
}

}  // namespace pypto::bindings
