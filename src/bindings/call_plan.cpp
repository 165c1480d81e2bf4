// CallPlan (call_plan.h): the common call's checks and marshalling in one pass over the
// arguments, with the CPython and buffer-protocol APIs (no NumPy headers: an array's dtype is
// compared as Python's `==` does, its memory read through the buffer it exports).
#include "call_plan.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

namespace nb = nanobind;

namespace pypto::bindings {

namespace {

// "dtype", interned once (a GetAttr with a C string makes the str object per call).
PyObject* dtype_name() {
  static PyObject* name = PyUnicode_InternFromString("dtype");
  return name;
}

// `v.dtype` equals one of `accepted` (Python's ==, identity first); any error counts as no.
bool dtype_accepted(PyObject* v, const std::vector<nb::object>& accepted) {
  PyObject* dt = PyObject_GetAttr(v, dtype_name());
  if (dt == nullptr) {
    PyErr_Clear();
    return false;
  }
  bool ok = false;
  for (const nb::object& a : accepted) {
    const int r = PyObject_RichCompareBool(dt, a.ptr(), Py_EQ);
    if (r < 0) PyErr_Clear();
    if (r == 1) {
      ok = true;
      break;
    }
  }
  Py_DECREF(dt);
  return ok;
}

// An exact int (bools are not) as a 128-bit value; false when it is none or past 64 bits.
bool exact_int(PyObject* v, Int128& out) {
  if (!PyLong_CheckExact(v)) return false;
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
  if (overflow == 0) {
    if (x == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out = x;
    return true;
  }
  if (overflow < 0) return false;  // below int64: no scalar dtype holds it
  const unsigned long long u = PyLong_AsUnsignedLongLong(v);
  if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  out = static_cast<Int128>(u);
  return true;
}

Int128 int128_of(const nb::handle& h) {
  Int128 v = 0;
  if (!exact_int(h.ptr(), v)) throw std::invalid_argument("CallPlan: a scalar bound must be an int within 64 bits");
  return v;
}

}  // namespace

CallPlan::CallPlan(nb::handle ndarray_type, const nb::list& entries, uint32_t n_tensors, uint32_t n_scalars,
                   uint32_t n_symbols)
    : ndarray_type_(nb::borrow(ndarray_type)), n_tensors_(n_tensors), n_scalars_(n_scalars), n_symbols_(n_symbols) {
  if (!PyType_Check(ndarray_type.ptr())) throw std::invalid_argument("CallPlan: ndarray_type must be a type");
  uint32_t arg = 0;
  for (nb::handle e : entries) {
    nb::tuple t = nb::cast<nb::tuple>(e);
    ParamPlan p;
    p.arg = arg++;
    const std::string what = nb::cast<std::string>(t[0]);
    p.slot = nb::cast<uint32_t>(t[1]);
    if (what == "tensor") {
      p.tensor = true;
      for (nb::handle d : nb::cast<nb::list>(t[2])) p.accepted.push_back(nb::borrow(d));
      p.dtype_code = nb::cast<int32_t>(t[3]);
      p.itemsize = nb::cast<uint32_t>(t[4]);
      p.shape = nb::cast<std::vector<int64_t>>(t[5]);
      p.written = nb::cast<bool>(t[6]);
      if (p.slot >= n_tensors || p.shape.size() > MarshalledCall::kMaxRank || p.itemsize == 0)
        throw std::invalid_argument("CallPlan: bad tensor entry " + std::to_string(p.arg));
      for (int64_t d : p.shape)
        if (d < 0 && static_cast<uint64_t>(-(d + 1)) >= n_symbols)
          throw std::invalid_argument("CallPlan: dynamic symbol out of range in entry " + std::to_string(p.arg));
    } else if (what == "scalar") {
      const std::string kind = nb::cast<std::string>(t[2]);
      p.kind = kind == "int" ? 0 : kind == "float" ? 1 : kind == "bool" ? 2 : -1;
      p.lo = int128_of(t[3]);
      p.hi = int128_of(t[4]);
      if (p.kind < 0 || p.slot >= n_scalars)
        throw std::invalid_argument("CallPlan: bad scalar entry " + std::to_string(p.arg));
    } else {
      throw std::invalid_argument("CallPlan: entry kind must be 'tensor' or 'scalar', got '" + what + "'");
    }
    params_.push_back(std::move(p));
  }
}

bool CallPlan::marshal_tensor(const ParamPlan& p, PyObject* v, MarshalledCall& call, std::vector<int64_t>& dims,
                              Span& span) const {
  if (Py_TYPE(v) != reinterpret_cast<PyTypeObject*>(ndarray_type_.ptr())) return false;  // no subclass
  if (!dtype_accepted(v, p.accepted)) return false;
  Py_buffer view;
  if (PyObject_GetBuffer(v, &view, PyBUF_STRIDES) != 0) {  // read-only arrays too (view.readonly)
    PyErr_Clear();
    return false;
  }
  bool ok = static_cast<size_t>(view.ndim) == p.shape.size() && view.itemsize == static_cast<Py_ssize_t>(p.itemsize) &&
            PyBuffer_IsContiguous(&view, 'C') && !(p.written && view.readonly) &&
            (view.len == 0 || reinterpret_cast<uintptr_t>(view.buf) % p.itemsize == 0);  // NumPy's `aligned`
  uint32_t* shape = &call.shapes[static_cast<size_t>(p.slot) * MarshalledCall::kMaxRank];
  for (size_t i = 0; ok && i < p.shape.size(); ++i) {
    const Py_ssize_t got = view.shape[i];
    const int64_t want = p.shape[i];
    if (want >= 0) {
      ok = got == want;
    } else {
      int64_t& d = dims[static_cast<size_t>(-(want + 1))];
      ok = got >= 0 && (d < 0 || d == got);
      d = got;
    }
    ok = ok && static_cast<uint64_t>(got) < (uint64_t{1} << 32);
    if (ok) shape[i] = static_cast<uint32_t>(got);
  }
  if (ok) {
    call.tensors[p.slot] = pto2_tensor_arg{view.buf, p.dtype_code, static_cast<uint32_t>(view.ndim), shape, nullptr};
    const uintptr_t lo = reinterpret_cast<uintptr_t>(view.buf);
    span = Span{lo, lo + static_cast<uintptr_t>(view.len), p.written};
  }
  PyBuffer_Release(&view);  // the memory stays: the call holds the array
  return ok;
}

bool CallPlan::marshal_scalar(const ParamPlan& p, PyObject* v, uint64_t& bits) {
  if (p.kind == 1) {  // float32: a float or an int that packs (struct's "f": finite past FLT_MAX refused)
    if (!PyFloat_CheckExact(v) && !PyLong_CheckExact(v)) return false;
    const double d = PyFloat_AsDouble(v);
    if (d == -1.0 && PyErr_Occurred()) {  // an int past a double
      PyErr_Clear();
      return false;
    }
    const float f = static_cast<float>(d);
    if (std::isinf(f) && !std::isinf(d)) return false;
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    bits = u;
    return true;
  }
  Int128 x = 0;
  if (p.kind == 2 && PyBool_Check(v)) {
    bits = v == Py_True ? 1 : 0;
    return true;
  }
  if (!exact_int(v, x) || x < p.lo || x > p.hi) return false;
  bits = static_cast<uint64_t>(x);  // two's complement, as `v & 0xFFFFFFFFFFFFFFFF`
  return true;
}

nb::object CallPlan::marshal(const nb::tuple& args) const {
  if (nb::len(args) != params_.size()) return nb::none();
  MarshalledCall call;
  call.tensors.resize(n_tensors_);
  call.shapes.assign(static_cast<size_t>(n_tensors_) * MarshalledCall::kMaxRank, 0);
  call.scalars.assign(n_scalars_, 0);
  std::vector<int64_t> dims(n_symbols_, -1);
  std::vector<Span> spans;
  spans.reserve(n_tensors_);
  for (const ParamPlan& p : params_) {
    PyObject* v = PyTuple_GET_ITEM(args.ptr(), p.arg);
    if (p.tensor) {
      Span s{};
      if (!marshal_tensor(p, v, call, dims, s)) return nb::none();
      if (s.hi != s.lo) spans.push_back(s);
    } else if (!marshal_scalar(p, v, call.scalars[p.slot])) {
      return nb::none();
    }
  }
  // Two arrays sharing a byte where one is written: the full checker refuses them or passes an
  // input as a copy (it is an output's very memory), with its located messages.
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size() && spans[j].lo < spans[i].hi; ++j)
      if (spans[i].written || spans[j].written) return nb::none();
  call.args = nb::borrow(args);
  return nb::cast(std::move(call), nb::rv_policy::move);
}

void bind_call_plan(nb::module_& abi) {
  nb::class_<MarshalledCall>(abi, "MarshalledCall",
                             "One call's arguments in the runtime's form (CallPlan.marshal); run it with "
                             "Runtime.run_call. Holds the arguments alive.")
      .def_prop_ro("scalars", [](const MarshalledCall& c) { return c.scalars; })
      .def_prop_ro(
          "tensors",
          [](const MarshalledCall& c) {
            // (address, dtype code, shape) per slot: what the runtime receives, for tests.
            nb::list out;
            for (const pto2_tensor_arg& t : c.tensors) {
              nb::list shape;
              for (uint32_t i = 0; i < t.ndims; ++i) shape.append(t.shapes[i]);
              out.append(nb::make_tuple(reinterpret_cast<uintptr_t>(t.data), t.dtype, shape));
            }
            return out;
          });
  nb::class_<CallPlan>(abi, "CallPlan",
                       "The per-call fast path of CompiledProgram.__call__ (call_plan.h):\n"
                       "    plan = CallPlan(np.ndarray, entries, n_tensors, n_scalars, n_symbols)\n"
                       "    call = plan.marshal((a, b, c))   # MarshalledCall, or None: use the full checker")
      .def(nb::init<nb::handle, const nb::list&, uint32_t, uint32_t, uint32_t>(), nb::arg("ndarray_type"),
           nb::arg("entries"), nb::arg("n_tensors"), nb::arg("n_scalars"), nb::arg("n_symbols"))
      .def("marshal", &CallPlan::marshal, nb::arg("args"));
}

}  // namespace pypto::bindings
