// tensor.cpp — value operations on tensors, arguments and predicates (no runtime state).
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "pto_orchestration_api.h"
#include "tensor_bytes.h"

const char* dtype_name(DataType dt) {
  static const char* names[] = {"float32", "float16", "bfloat16", "int8",   "int16",  "int32",
                                "int64",   "uint8",   "uint16",   "uint32", "uint64", "bool"};
  const auto i = static_cast<size_t>(dt);
  return i < 12 ? names[i] : "?";
}

void pto2_row_major_strides(const uint32_t* shapes, uint32_t ndims, int64_t* strides) {
  // Unsigned: a shape past 2^63 elements wraps instead of overflowing (undefined behaviour);
  // such a tensor is refused where it is made (make_tensor_external, allocation).
  uint64_t s = 1;
  for (uint32_t i = ndims; i-- > 0;) {
    strides[i] = static_cast<int64_t>(s);
    s *= shapes[i];
  }
}

void Tensor::view_out_of_range(uint32_t axis, uint32_t view_shape, uint32_t view_offset) const {
  throw std::out_of_range("Tensor::view: axis " + std::to_string(axis) + " offset " + std::to_string(view_offset) +
                          " + shape " + std::to_string(view_shape) + " exceeds extent " + std::to_string(shapes[axis]));
}

namespace {
// Tensor's fields are public: a rank written by hand would index past shapes[] and strides[].
void check_rank(const Tensor& t, const char* call) {
  if (t.ndims > PTO2_MAX_DIMS)
    throw std::invalid_argument(std::string(call) + ": the tensor's rank (ndims) is " + std::to_string(t.ndims) +
                                ", above PTO2_MAX_DIMS (" + std::to_string(PTO2_MAX_DIMS) +
                                "); a Tensor's fields may be written by hand, but ndims must stay in 0..8");
}
}  // namespace

void Tensor::view_invalid(uint32_t rank, uint32_t what) const {
  check_rank(*this, "Tensor::view");  // throws: view() calls this for a rank above PTO2_MAX_DIMS only
  throw std::logic_error("Tensor::view: rank " + std::to_string(rank) + ", case " + std::to_string(what));
}

// view() axis by axis, in order: ranks 5..8 (a rank past the arrays refused), and any view with
// an axis outside the source (the first such axis an error, or an empty view clamped there).
Tensor Tensor::view_wide(const uint32_t* view_shapes, const uint32_t* view_offsets) const {
  if (ndims > PTO2_MAX_DIMS) view_invalid(ndims, 0);
  Tensor v = *this;
  uint64_t offset_add = static_cast<uint64_t>(offset);
  for (uint32_t i = 0; i < ndims; ++i) {
    uint32_t off = view_offsets[i];
    if (static_cast<uint64_t>(off) + view_shapes[i] > shapes[i]) {
      if (view_shapes[i] != 0) view_out_of_range(i, view_shapes[i], off);
      off = shapes[i];
    }
    offset_add += static_cast<uint64_t>(off) * static_cast<uint64_t>(strides[i]);
    v.shapes[i] = view_shapes[i];
  }
  v.offset = static_cast<int64_t>(offset_add);
  return v;
}

Tensor Tensor::transpose(uint32_t a, uint32_t b) const {
  check_rank(*this, "Tensor::transpose");
  if (a >= ndims || b >= ndims)
    throw std::out_of_range("Tensor::transpose: axes " + std::to_string(a) + ", " + std::to_string(b) +
                            " for a tensor of rank " + std::to_string(ndims));
  Tensor t = *this;
  std::swap(t.shapes[a], t.shapes[b]);
  std::swap(t.strides[a], t.strides[b]);
  return t;
}

int64_t Tensor::element_offset(const int64_t* idx) const {
  check_rank(*this, "Tensor::element_offset");
  int64_t off = offset;
  for (uint32_t i = 0; i < ndims; ++i) {
    int64_t step;
    if (__builtin_mul_overflow(idx[i], strides[i], &step) || __builtin_add_overflow(off, step, &off))
      throw std::out_of_range("Tensor::element_offset: index " + std::to_string(idx[i]) + " on axis " + std::to_string(i) +
                              " (stride " + std::to_string(strides[i]) + ", tensor offset " + std::to_string(offset) +
                              ") overflows int64 elements");
  }
  return off;
}

int64_t Tensor::numel() const {
  check_rank(*this, "Tensor::numel");
  int64_t n = 1;
  for (uint32_t i = 0; i < ndims; ++i)
    if (__builtin_mul_overflow(n, static_cast<int64_t>(shapes[i]), &n))
      throw std::invalid_argument("Tensor::numel: the extents " + pto2::detail::shape_text(shapes, ndims) +
                                  " hold more than 2^63 elements");
  return n;
}

Tensor Tensor::reshape(const uint32_t* new_shapes, uint32_t new_ndims) const {
  check_rank(*this, "Tensor::reshape");
  if (new_ndims == 0 || new_ndims > PTO2_MAX_DIMS)
    throw std::invalid_argument("Tensor::reshape: rank " + std::to_string(new_ndims) + " is not in 1.." +
                                std::to_string(PTO2_MAX_DIMS));
  if (!is_contiguous())
    throw std::invalid_argument("Tensor::reshape: the source view is not contiguous (a slice or transpose of a "
                                "larger tensor); reshape the whole tensor, or copy the view in a kernel first");
  int64_t n = 1;
  bool overflow = false;
  for (uint32_t i = 0; i < new_ndims; ++i) overflow |= __builtin_mul_overflow(n, int64_t{new_shapes[i]}, &n);
  // The views of the result must have int64 offsets, like those of any tensor (tensor_bytes.h):
  // [2^61] int8 as [1, 1, 1, 1, 1, 1, 1, 2^61] reaches 8 x 2^61 one past the end.
  size_t bytes = 0;
  if (!overflow && n == numel() && !pto2::detail::checked_tensor_bytes(new_shapes, new_ndims, dtype, &bytes, offset))
    throw std::invalid_argument("Tensor::reshape: the shape " + pto2::detail::shape_text(new_shapes, new_ndims) +
                                " at offset " + std::to_string(offset) +
                                " lets views reach past 2^63 bytes (one past the end of every axis)");
  if (overflow || n != numel())
    throw std::invalid_argument("Tensor::reshape: cannot reshape a tensor of " + std::to_string(numel()) +
                                " elements into a shape " + pto2::detail::shape_text(new_shapes, new_ndims) + " of " +
                                (overflow ? std::string("more than 2^63") : std::to_string(n)) + " elements");
  Tensor t = *this;
  t.ndims = new_ndims;
  for (uint32_t i = 0; i < PTO2_MAX_DIMS; ++i) t.shapes[i] = i < new_ndims ? new_shapes[i] : 0;
  pto2_row_major_strides(t.shapes, new_ndims, t.strides);
  for (uint32_t i = new_ndims; i < PTO2_MAX_DIMS; ++i) t.strides[i] = 0;
  return t;
}

bool Tensor::is_contiguous() const {
  check_rank(*this, "Tensor::is_contiguous");
  uint64_t s = 1;  // unsigned: extents written by hand may multiply past int64 (no such tensor is contiguous)
  for (uint32_t i = ndims; i-- > 0;) {
    if (shapes[i] != 1 && static_cast<uint64_t>(strides[i]) != s) return false;
    s *= shapes[i];
  }
  return true;
}

Tensor make_tensor_external(void* data, const uint32_t* shapes, uint32_t ndims, DataType dtype) {
  if (ndims > PTO2_MAX_DIMS) throw std::invalid_argument("make_tensor_external: rank " + std::to_string(ndims) + " > PTO2_MAX_DIMS");
  if (!pto2::detail::valid_dtype(dtype))
    throw std::invalid_argument("make_tensor_external: " + pto2::detail::invalid_dtype_text(dtype));
  // Element offsets and byte addresses of its views are int64 (views, tracking, kernels).
  size_t bytes = 0;
  if (!pto2::detail::checked_tensor_bytes(shapes, ndims, dtype, &bytes))
    throw std::invalid_argument("make_tensor_external: a tensor " + pto2::detail::shape_text(shapes, ndims) + " " +
                                dtype_name(dtype) + " spans more than 2^63 bytes (its extents multiplied, an empty axis "
                                "counted as 1; no memory holds it: check the shape)");
  if (pto2::detail::null_data_with_elements(data, shapes, ndims))
    throw std::invalid_argument("make_tensor_external: a tensor " + pto2::detail::shape_text(shapes, ndims) + " " +
                                dtype_name(dtype) + " has elements but a NULL data pointer (kernels would read and "
                                "write through it): pass the memory that holds it");
  Tensor t = pto2::TensorFactory::blank();
  t.data = data;
  t.ndims = ndims;
  for (uint32_t i = 0; i < ndims; ++i) t.shapes[i] = shapes[i];
  pto2_row_major_strides(t.shapes, ndims, t.strides);
  t.dtype = dtype;
  return t;
}

Tensor from_tensor_arg(const ChipTensorArg& arg) { return arg.tensor; }

const ChipTensorArg& ChipStorageTaskArgs::tensor(uint32_t i) const {
  if (i >= tensors.size())
    throw std::out_of_range("ChipStorageTaskArgs::tensor(" + std::to_string(i) + "): only " + std::to_string(tensors.size()) + " tensor arguments");
  return tensors[i];
}

uint64_t ChipStorageTaskArgs::scalar(uint32_t i) const {
  if (i >= scalars.size())
    throw std::out_of_range("ChipStorageTaskArgs::scalar(" + std::to_string(i) + "): only " + std::to_string(scalars.size()) + " scalar arguments");
  return scalars[i];
}

TensorCreateInfo::TensorCreateInfo(const uint32_t* shapes_in, uint32_t ndims_in, DataType dtype_in, bool manual_dep_in)
    : ndims(ndims_in), dtype(dtype_in), manual_dep(manual_dep_in) {
  if (ndims_in > PTO2_MAX_DIMS) throw std::invalid_argument("TensorCreateInfo: rank " + std::to_string(ndims_in) + " > PTO2_MAX_DIMS");
  if (!pto2::detail::valid_dtype(dtype_in))
    throw std::invalid_argument("TensorCreateInfo: " + pto2::detail::invalid_dtype_text(dtype_in));
  for (uint32_t i = 0; i < ndims_in; ++i) shapes[i] = shapes_in[i];
}

void Arg::add_output(const TensorCreateInfo& info) {
  Tensor t = pto2::TensorFactory::blank();
  t.ndims = info.ndims;
  for (uint32_t i = 0; i < info.ndims; ++i) t.shapes[i] = info.shapes[i];
  pto2_row_major_strides(t.shapes, t.ndims, t.strides);
  t.dtype = info.dtype;
  t.manual_dep = info.manual_dep;
  add(t, PTO2ArgDir::OUTPUT_NEW);
  has_new_output_ = true;
}

void Arg::reset() {
  tensors_.clear();
  dirs_.clear();
  scalars_.clear();
  deps_.clear();
  dump_slots_.clear();
  has_predicate_ = false;
  has_new_output_ = false;
  allow_early_resolve_ = false;
  timing_slot_ = -1;
  source_file_ = nullptr;
  source_line_ = 0;
  launch_spec = LaunchSpec{};
}

const Tensor& TaskOutputTensors::get_ref(uint32_t i) const {
  if (i >= tensors_.size())
    throw std::out_of_range("TaskOutputTensors::get_ref(" + std::to_string(i) + "): only " + std::to_string(tensors_.size()) + " tensors");
  return tensors_[i];
}

CoreTaskPredicate::CoreTaskPredicate(const Tensor& operand_in, std::initializer_list<int64_t> indices, PredicateOp op_in,
                                     int64_t target_in)
    : operand(operand_in), op(op_in), target(target_in) {
  if (indices.size() != operand_in.ndims)
    throw std::invalid_argument("CoreTaskPredicate: " + std::to_string(indices.size()) + " indices for a tensor of rank " +
                                std::to_string(operand_in.ndims));
  // Range-checked like get_tensor_data: a far index would read outside the tensor.
  uint32_t axis = 0;
  for (int64_t i : indices) {
    if (i < 0 || i >= static_cast<int64_t>(operand_in.shapes[axis]))
      throw std::invalid_argument("CoreTaskPredicate: index " + std::to_string(i) + " out of range on axis " +
                                  std::to_string(axis) + " (extent " + std::to_string(operand_in.shapes[axis]) + ")");
    ++axis;
  }
  element = operand_in.element_offset(indices.begin());
}

bool CoreTaskPredicate::evaluate() const {
  if (!operand.data) return false;
  const int64_t v = pto2::load_as<int64_t>(static_cast<const char*>(operand.data) + element * static_cast<int64_t>(dtype_size(operand.dtype)), operand.dtype);
  switch (op) {
    case PredicateOp::EQ: return v == target;
    case PredicateOp::NE: return v != target;
    case PredicateOp::GT: return v > target;
    case PredicateOp::LT: return v < target;
    case PredicateOp::GE: return v >= target;
    case PredicateOp::LE: return v <= target;
  }
  return false;
}

namespace pto2 {

namespace {
// One element of `dt` holding `v`, as raw bytes (at most 8).
void encode_element(DataType dt, double v, unsigned char* out) {
  auto put = [&](auto x) { std::memcpy(out, &x, sizeof x); };
  switch (dt) {
    case DataType::FLOAT32: put(static_cast<float>(v)); break;
    case DataType::FLOAT16: put(float_to_half(static_cast<float>(v))); break;
    case DataType::BFLOAT16: put(float_to_bfloat16(static_cast<float>(v))); break;
    case DataType::INT8: put(static_cast<int8_t>(v)); break;
    case DataType::INT16: put(static_cast<int16_t>(v)); break;
    case DataType::INT32: put(static_cast<int32_t>(v)); break;
    case DataType::INT64: put(static_cast<int64_t>(v)); break;
    case DataType::UINT8: put(static_cast<uint8_t>(v)); break;
    case DataType::UINT16: put(static_cast<uint16_t>(v)); break;
    case DataType::UINT32: put(static_cast<uint32_t>(v)); break;
    case DataType::UINT64: put(static_cast<uint64_t>(v)); break;
    case DataType::BOOL: put(static_cast<uint8_t>(v != 0.0)); break;
  }
}
}  // namespace

void fill_elements(void* data, size_t numel, DataType dt, double v) {
  const size_t size = dtype_size(dt);
  if (v == 0.0) {   // +0 and -0 of every dtype but the float sign bit: all-zero bytes
    if (!std::signbit(v)) {
      std::memset(data, 0, numel * size);
      return;
    }
  }
  unsigned char elem[8];
  encode_element(dt, v, elem);
  auto* p = static_cast<unsigned char*>(data);
  for (size_t i = 0; i < numel; ++i) std::memcpy(p + i * size, elem, size);
}
}  // namespace pto2
