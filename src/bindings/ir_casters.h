// nanobind type caster for pypto::ir::Attrs (std::map<std::string, AttrValue>): converts a
// Python dict whose values are bool / int / float / str / Expr / list[Expr] to Attrs and back.
// Every binding file that passes Attrs across the boundary must include this header (and not
// nanobind/stl/map.h + variant.h for the same type), so all translation units agree.
//
//   ir.Call.make_op("tensor.create", [...], {"dtype": ir.DataType.FP32, "manual_dep": True})
//   call.attrs  ->  {"dtype": "FP32", "manual_dep": True}
//
// Enum values (nanobind enums are Python enum.Enum subclasses) are stored as their name, the
// way the op registry keeps "dtype" / "target_memory" / ScopeStmt "level".
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>

#include <climits>
#include <string>
#include <vector>

#include "pypto/ir/attrs.h"
#include "pypto/ir/expr.h"

namespace nanobind::detail {

template <>
struct type_caster<pypto::ir::Attrs> {
  NB_TYPE_CASTER(pypto::ir::Attrs, const_name("dict[str, typing.Any]"))

  static bool to_expr(handle h, pypto::ir::ExprPtr* out) noexcept {
    make_caster<pypto::ir::ExprPtr> c;
    cleanup_list cl(nullptr);
    if (!c.from_python(h, (uint32_t)cast_flags::convert, &cl)) {
      cl.release();
      return false;
    }
    *out = c.value;
    cl.release();
    return true;
  }

  static bool to_value(handle h, pypto::ir::AttrValue* out) noexcept {
    PyObject* o = h.ptr();
    if (PyBool_Check(o)) {
      *out = (o == Py_True);
      return true;
    }
    if (PyLong_Check(o)) {
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(o, &overflow);
      if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return false; }
      *out = static_cast<int64_t>(x);
      return true;
    }
    if (PyFloat_Check(o)) {
      *out = PyFloat_AsDouble(o);
      return true;
    }
    if (PyUnicode_Check(o)) {
      Py_ssize_t n = 0;
      const char* s = PyUnicode_AsUTF8AndSize(o, &n);
      if (!s) { PyErr_Clear(); return false; }
      *out = std::string(s, static_cast<size_t>(n));
      return true;
    }
    if (PyList_Check(o) || PyTuple_Check(o)) {
      std::vector<pypto::ir::ExprPtr> v;
      Py_ssize_t n = PySequence_Size(o);
      for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject* item = PySequence_GetItem(o, i);
        if (!item) { PyErr_Clear(); return false; }
        pypto::ir::ExprPtr e;
        bool ok = to_expr(handle(item), &e);
        Py_DECREF(item);
        if (!ok) return false;
        v.push_back(std::move(e));
      }
      *out = std::move(v);
      return true;
    }
    pypto::ir::ExprPtr e;
    if (to_expr(h, &e)) {
      *out = std::move(e);
      return true;
    }
    // A nanobind enum (enum.Enum subclass, e.g. ir.DataType.FP32): stored as its name,
    // the spelling the op registry reads ("dtype": "FP32", "target_memory": "Left").
    if (!PyObject_HasAttrString(o, "_value_")) {
      // Other integer-like objects (numpy integers): their integer value.
      if (!PyIndex_Check(o)) return false;
      PyObject* i = PyNumber_Index(o);
      if (!i) { PyErr_Clear(); return false; }
      int overflow = 0;
      long long x = PyLong_AsLongLongAndOverflow(i, &overflow);
      Py_DECREF(i);
      if (overflow || (x == -1 && PyErr_Occurred())) { PyErr_Clear(); return false; }
      *out = static_cast<int64_t>(x);
      return true;
    }
    PyObject* nm = PyObject_GetAttrString(o, "name");
    if (!nm) { PyErr_Clear(); return false; }
    bool ok = PyUnicode_Check(nm);
    const char* cs = ok ? PyUnicode_AsUTF8(nm) : nullptr;
    if (cs) *out = std::string(cs);
    Py_DECREF(nm);
    if (!cs) { PyErr_Clear(); return false; }
    return true;
  }

  bool from_python(handle src, uint32_t, cleanup_list*) noexcept {
    PyObject* o = src.ptr();
    if (!PyDict_Check(o)) return false;
    value.clear();
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(o, &pos, &k, &v)) {
      if (!PyUnicode_Check(k)) return false;
      const char* ks = PyUnicode_AsUTF8(k);
      if (!ks) { PyErr_Clear(); return false; }
      pypto::ir::AttrValue av;
      if (!to_value(handle(v), &av)) return false;
      value.emplace(std::string(ks), std::move(av));
    }
    return true;
  }

  static handle from_cpp(const pypto::ir::Attrs& attrs, rv_policy, cleanup_list*) noexcept {
    PyObject* d = PyDict_New();
    if (!d) return handle();
    for (const auto& [key, val] : attrs) {
      PyObject* item = nullptr;
      if (auto b = std::get_if<bool>(&val)) {
        item = PyBool_FromLong(*b);
      } else if (auto i = std::get_if<int64_t>(&val)) {
        item = PyLong_FromLongLong(*i);
      } else if (auto f = std::get_if<double>(&val)) {
        item = PyFloat_FromDouble(*f);
      } else if (auto s = std::get_if<std::string>(&val)) {
        item = PyUnicode_FromStringAndSize(s->data(), static_cast<Py_ssize_t>(s->size()));
      } else if (auto e = std::get_if<pypto::ir::ExprPtr>(&val)) {
        item = make_caster<pypto::ir::ExprPtr>::from_cpp(*e, rv_policy::automatic, nullptr).ptr();
      } else if (auto l = std::get_if<std::vector<pypto::ir::ExprPtr>>(&val)) {
        item = PyList_New(static_cast<Py_ssize_t>(l->size()));
        for (size_t j = 0; item && j < l->size(); ++j) {
          PyObject* x = make_caster<pypto::ir::ExprPtr>::from_cpp((*l)[j], rv_policy::automatic, nullptr).ptr();
          if (!x) { Py_DECREF(item); item = nullptr; break; }
          PyList_SET_ITEM(item, static_cast<Py_ssize_t>(j), x);
        }
      }
      if (!item || PyDict_SetItemString(d, key.c_str(), item) != 0) {
        Py_XDECREF(item);
        Py_DECREF(d);
        return handle();
      }
      Py_DECREF(item);
    }
    return handle(d);
  }
};

}  // namespace nanobind::detail
