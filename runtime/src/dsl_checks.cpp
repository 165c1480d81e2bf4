// dsl_checks.cpp — run-time checks generated orchestration code calls where the compiler could
// not decide statically (dynamic slice offsets and shapes, dynamic call-argument extents, a
// loop step known only at run time, a scalar argument an integer parameter cannot hold). Each failure names the DSL line (docs/running.md,
// "What is checked when"); the run then fails with RunError carrying the message.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pto_orchestration_api.h"

namespace {

std::string at(const char* file, int32_t line) {
  if (!file || line <= 0) return std::string();
  return std::string(file) + ":" + std::to_string(line) + ": ";
}

// An integer parameter dtype of pto2_int_arg: its DSL name, signedness and width.
struct IntParam {
  const char* name;
  bool is_signed;
  int bits;
};

IntParam int_param(DataType to) {
  switch (to) {
    case DataType::INT8: return {"INT8", true, 8};
    case DataType::INT16: return {"INT16", true, 16};
    case DataType::INT32: return {"INT32", true, 32};
    case DataType::INT64: return {"INT64", true, 64};
    case DataType::UINT8: return {"UINT8", false, 8};
    case DataType::UINT16: return {"UINT16", false, 16};
    case DataType::UINT32: return {"UINT32", false, 32};
    case DataType::UINT64: return {"UINT64", false, 64};
    default: break;
  }
  throw std::invalid_argument(std::string("pto2_int_arg: parameter dtype ") + dtype_name(to) +
                              " is not an integer (generated code passes INT8..UINT64)");
}

// The largest value of `p` (its smallest is 0 or -largest - 1).
uint64_t max_of(const IntParam& p) {
  return p.bits == 64 ? (p.is_signed ? uint64_t{INT64_MAX} : UINT64_MAX) : (uint64_t{1} << (p.bits - p.is_signed)) - 1;
}

// `v` as Python prints a float: the shortest digits that read back as `v`, positional from 1e-4
// to 1e16 ("3000000000.0", "0.25"), else exponential ("1e+20"); "nan", "inf".
std::string python_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[48];
  int digits = 1;
  for (; digits < 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::snprintf(buf, sizeof buf, "%.*e", digits - 1, v);
  const int exp10 = std::atoi(std::strchr(buf, 'e') + 1);
  if (exp10 < -4 || exp10 >= 16) return buf;
  std::snprintf(buf, sizeof buf, "%.*f", digits - 1 - exp10 > 1 ? digits - 1 - exp10 : 1, v);
  return buf;
}

[[noreturn]] void argument_does_not_fit(const std::string& value, const IntParam& p, const char* callee,
                                        const char* param, const char* file, int32_t line) {
  const std::string lo = !p.is_signed ? "0" : "-" + std::to_string(max_of(p) + 1);
  throw std::out_of_range(at(file, line) + "argument '" + (param ? param : "?") + "' of '" + (callee ? callee : "?") +
                          "' = " + value + " does not fit pl." + p.name + " (range " + lo + ".." +
                          std::to_string(max_of(p)) + "): pass a value in range, or convert it with pl.cast");
}

}  // namespace

uint64_t pto2_int_arg(int64_t v, DataType to, const char* callee, const char* param, const char* file, int32_t line) {
  const IntParam p = int_param(to);
  const bool fits = v < 0 ? p.is_signed && static_cast<uint64_t>(-(v + 1)) <= max_of(p)   // -(v + 1): no overflow
                          : static_cast<uint64_t>(v) <= max_of(p);
  if (!fits) argument_does_not_fit(std::to_string(v), p, callee, param, file, line);
  return static_cast<uint64_t>(v);
}

uint64_t pto2_int_arg(uint64_t v, DataType to, const char* callee, const char* param, const char* file, int32_t line) {
  const IntParam p = int_param(to);
  if (v > max_of(p)) argument_does_not_fit(std::to_string(v), p, callee, param, file, line);
  return v;
}

uint64_t pto2_int_arg(double v, DataType to, const char* callee, const char* param, const char* file, int32_t line) {
  const IntParam p = int_param(to);
  // Python's int(v): toward zero. The bounds are powers of two, exact as doubles; NaN fails both tests.
  const double t = std::trunc(v), end = std::ldexp(1.0, p.bits - p.is_signed);
  if (!(t >= (p.is_signed ? -end : 0.0) && t < end)) argument_does_not_fit(python_float(v), p, callee, param, file, line);
  return p.is_signed ? static_cast<uint64_t>(static_cast<int64_t>(t)) : static_cast<uint64_t>(t);
}

Tensor pto2_view_at(const Tensor& src, uint32_t ndims, const int64_t* shapes, const int64_t* offsets, const char* what,
                    const char* file, int32_t line) {
  const std::string who = at(file, line) + "pl.tensor.slice '" + (what ? what : "?") + "'";
  if (ndims != src.ndims)
    throw std::out_of_range(who + ": " + std::to_string(ndims) + " offsets/shapes for a tensor of rank " +
                            std::to_string(src.ndims));
  uint32_t sh[PTO2_MAX_DIMS], off[PTO2_MAX_DIMS];
  for (uint32_t i = 0; i < ndims; ++i) {
    // Checked at full width, before narrowing to the runtime view's 32-bit entries: an offset
    // of 2^32 + k must not select row k. Written so that no sum can overflow.
    const int64_t extent = src.shapes[i];
    if (shapes[i] < 0 || offsets[i] < 0 || shapes[i] > extent || offsets[i] > extent - shapes[i])
      throw std::out_of_range(who + ": offset " + std::to_string(offsets[i]) + " + shape " + std::to_string(shapes[i]) +
                              " on axis " + std::to_string(i) + " leaves the source tensor (extent " +
                              std::to_string(extent) + ")");
    sh[i] = static_cast<uint32_t>(shapes[i]);
    off[i] = static_cast<uint32_t>(offsets[i]);
  }
  return src.view(sh, off);
}

void pto2_reshape_check(const Tensor& src, const uint32_t* shapes, uint32_t ndims, const char* what, const char* file,
                        int32_t line) {
  try {
    (void)src.reshape(shapes, ndims);
  } catch (const std::invalid_argument& e) {
    std::string why = e.what();
    const std::string prefix = "Tensor::reshape: ";
    if (why.compare(0, prefix.size(), prefix) == 0) why = why.substr(prefix.size());
    throw std::invalid_argument(at(file, line) + "pl.tensor.reshape '" + (what ? what : "?") + "': " + why);
  }
}

uint32_t pto2_slice_u32(int64_t v, const char* kind, const Tensor& src, uint32_t axis, const char* what,
                        const char* file, int32_t line) {
  if (v >= 0 && v <= static_cast<int64_t>(UINT32_MAX)) return static_cast<uint32_t>(v);
  const std::string extent = axis < src.ndims ? std::to_string(src.shapes[axis]) : std::string("?");
  throw std::out_of_range(at(file, line) + "pl.tensor.slice '" + (what ? what : "?") + "': " + (kind ? kind : "entry") +
                          " " + std::to_string(v) + " on axis " + std::to_string(axis) +
                          " is outside 0..4294967295 (source extent " + extent +
                          "; views are 32-bit, a slice past the end is clamped to an empty view)");
}

void pto2_check_arg_extent(const Tensor& t, uint32_t axis, int64_t expected, const char* callee, const char* param,
                           const char* file, int32_t line) {
  if (axis < t.ndims && static_cast<int64_t>(t.shapes[axis]) <= expected) return;   // smaller: clamped (§18)
  const std::string got = axis < t.ndims ? std::to_string(t.shapes[axis]) : std::string("(no such axis)");
  throw std::invalid_argument(at(file, line) + "argument '" + (param ? param : "?") + "' of '" + (callee ? callee : "?") +
                              "' has extent " + got + " on axis " + std::to_string(axis) +
                              " at run time, but the parameter declares " + std::to_string(expected) +
                              " (pass a view of the parameter's shape, e.g. with pl.tensor.slice)");
}

uint32_t pto2_extent_u32(int64_t v, const char* file, int32_t line) {
  if (v < 0 || v > static_cast<int64_t>(UINT32_MAX))
    throw std::out_of_range(at(file, line) + "tensor extent " + std::to_string(v) +
                            " is out of range 0..4294967295 (runtime tensor extents are 32-bit)");
  return static_cast<uint32_t>(v);
}

namespace {
[[noreturn]] void array_slot_out_of_range(const std::string& k, int64_t n, const char* file, int32_t line) {
  throw std::out_of_range(at(file, line) + "array index " + k + " is out of range 0.." + std::to_string(n - 1) +
                          " (a pl.array of " + std::to_string(n) + " slots; negative indices do not count from the end)");
}
}  // namespace

void pto2_array_slot_out_of_range(int64_t k, int64_t n, const char* file, int32_t line) {
  array_slot_out_of_range(std::to_string(k), n, file, line);
}

void pto2_array_slot_out_of_range_unsigned(uint64_t k, int64_t n, const char* file, int32_t line) {
  array_slot_out_of_range(std::to_string(k), n, file, line);
}

void pto2_division_by_zero(const char* file, int32_t line) {
  throw std::invalid_argument(at(file, line) + "integer division or modulo by zero at run time (// or %): "
                              "the divisor is 0");
}

void pto2_assertion_failed(const char* message, const char* file, int32_t line) {
  const std::string m = message && *message ? std::string(": ") + message : std::string();
  throw std::invalid_argument(at(file, line) + "assertion failed" + m);
}

void pto2_negative_shift(const char* file, int32_t line) {
  throw std::invalid_argument(at(file, line) + "negative shift count at run time (<< or >>): the count is below 0");
}

uint64_t pto2_range_count(int64_t start, int64_t stop, int64_t step, const char* file, int32_t line) {
  if (step == 0)
    throw std::invalid_argument(at(file, line) + "pl.range() step is 0 at run time (start " + std::to_string(start) +
                                ", stop " + std::to_string(stop) + "): a loop needs a non-zero step");
  // Python's range: ceil((stop - start) / step) iterations, 0 when the range is empty. Unsigned
  // arithmetic: the distance between two int64 values always fits in uint64.
  const auto ustart = static_cast<uint64_t>(start), ustop = static_cast<uint64_t>(stop);
  if (step > 0) return start < stop ? (ustop - ustart - 1) / static_cast<uint64_t>(step) + 1 : 0;
  const uint64_t mag = 0 - static_cast<uint64_t>(step);
  return start > stop ? (ustart - ustop - 1) / mag + 1 : 0;
}

int64_t pto2_chunk_stride(int64_t step, int64_t chunk, const char* file, int32_t line) {
  int64_t stride = 0;
  if (__builtin_mul_overflow(step, chunk, &stride))
    throw std::overflow_error(at(file, line) + "pl.auto_chunk: step * chunk = " + std::to_string(step) + " * " +
                              std::to_string(chunk) + " overflows int64 at run time: use a smaller step or chunk");
  return stride;
}
