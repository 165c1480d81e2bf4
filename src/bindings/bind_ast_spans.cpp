// `ir.AstSpans`: Spans of Python `ast` nodes for the DSL parser, which builds one per IR node
// (pypto/frontend/diagnostics.py, Source.span), so this is its hottest helper.
//
// It handles the common case: a node on one ASCII source line, where ast's UTF-8 byte
// offsets are the character columns. Anything else (a node spanning several lines, a
// non-ASCII line, a node without positions) gives None, and the parser computes that span in
// Python, with the same rules:
//
//   spans = ir.AstSpans("prog.py", lines, line_offset)   # lines: list[str], "\n" kept or not
//   spans.of(node)   # Span(file, line + offset, col + 1, line + offset, end_col + 1, text) or None
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "bindings.h"
#include "pypto/ir/span.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace pypto::bindings {
namespace {

using pypto::ir::SharedText;
using pypto::ir::Span;

// An int attribute of `obj` (false when missing or not an int: the caller falls back).
bool int_attr(PyObject* obj, PyObject* name, long* out) {
  PyObject* v = PyObject_GetAttr(obj, name);
  if (!v) {
    PyErr_Clear();
    return false;
  }
  bool ok = PyLong_CheckExact(v);
  if (ok) {
    *out = PyLong_AsLong(v);
    if (*out == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      ok = false;
    }
  }
  Py_DECREF(v);
  return ok;
}

class AstSpans {
 public:
  AstSpans(std::string file, nb::list lines, int line_offset)
      : file_(std::move(file)), lines_(std::move(lines)), line_offset_(line_offset) {}

  nb::object of(nb::handle node) const {
    static PyObject* const kLineno = PyUnicode_InternFromString("lineno");
    static PyObject* const kEndLineno = PyUnicode_InternFromString("end_lineno");
    static PyObject* const kColOffset = PyUnicode_InternFromString("col_offset");
    static PyObject* const kEndColOffset = PyUnicode_InternFromString("end_col_offset");
    long line = 0, end_line = 0, byte_col = 0, end_byte_col = 0;
    PyObject* n = node.ptr();
    if (!int_attr(n, kLineno, &line) || line == 0 || !int_attr(n, kEndLineno, &end_line) || end_line != line ||
        !int_attr(n, kColOffset, &byte_col) || !int_attr(n, kEndColOffset, &end_byte_col) || byte_col < 0 ||
        end_byte_col < 0) {
      return nb::none();
    }
    long file_line = line + line_offset_;
    if (file_line < INT_MIN || file_line > INT_MAX) return nb::none();
    SharedText text;
    if (!line_text(file_line, &text)) return nb::none();
    long n_chars = static_cast<long>(text.size());
    int col = static_cast<int>(std::min(byte_col, n_chars)) + 1;
    int end_col = static_cast<int>(std::min(end_byte_col, n_chars)) + 1;
    int l = static_cast<int>(file_line);
    return nb::cast(Span{file_, l, col, l, end_col, std::move(text)});
  }

 private:
  // The text of 1-based file line `line` without its trailing newlines ("" past the end), like
  // Source.line_text; false when it is not ASCII (or not a str). All the nodes of one line
  // share one SharedText (made on the line's first use).
  bool line_text(long line, SharedText* out) const {
    long n_lines = static_cast<long>(PyList_GET_SIZE(lines_.ptr()));
    if (line <= 0 || line > n_lines) return true;
    if (line_cache_.size() != static_cast<size_t>(n_lines)) line_cache_.assign(static_cast<size_t>(n_lines), {});
    PyObject* s = PyList_GET_ITEM(lines_.ptr(), line - 1);
    if (!PyUnicode_CheckExact(s) || !PyUnicode_IS_ASCII(s)) return false;
    CachedLine& c = line_cache_[static_cast<size_t>(line - 1)];
    if (c.str.ptr() != s) {   // first use (or the caller replaced the list item)
      const char* data = static_cast<const char*>(PyUnicode_DATA(s));
      Py_ssize_t len = PyUnicode_GET_LENGTH(s);
      while (len > 0 && data[len - 1] == '\n') --len;
      c.text = SharedText(std::string(data, static_cast<size_t>(len)));
      c.str = nb::borrow(s);
    }
    *out = c.text;
    return true;
  }

  struct CachedLine {
    nb::object str;   // the list item `text` was made from
    SharedText text;
  };

  SharedText file_;
  nb::list lines_;
  int line_offset_;
  mutable std::vector<CachedLine> line_cache_;
};

}  // namespace

void bind_ast_spans(nb::module_& ir_module) {
  nb::class_<AstSpans>(ir_module, "AstSpans",
                       "Spans of Python ast nodes on one ASCII line (the DSL parser's fast path).")
      .def(nb::init<std::string, nb::list, int>(), "file"_a, "lines"_a, "line_offset"_a)
      .def("of", &AstSpans::of, "node"_a,
           "The node's Span, or None when it spans several lines, its line is not ASCII or it has no position.");
}

}  // namespace pypto::bindings
