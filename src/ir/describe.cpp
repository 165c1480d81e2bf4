// Short spellings of types and exprs for diagnostics (see describe.h).
#include "describe.h"

#include <sstream>

namespace pypto::ir::detail {

std::string describe_shape(const std::vector<ExprPtr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += describe(shape[i]);
  }
  return s + "]";
}

std::string describe(const TypePtr& t) {
  if (!t) return "<null type>";
  std::ostringstream os;
  switch (t->kind) {
    case TypeKind::Scalar:
      os << "Scalar[" << to_string(t->as<ScalarType>()->dtype) << "]";
      break;
    case TypeKind::Tensor: {
      auto* tt = t->as<TensorType>();
      os << "Tensor[" << describe_shape(tt->shape) << ", " << to_string(tt->dtype);
      if (tt->layout != Layout::ND) os << ", " << to_string(tt->layout);
      os << "]";
      break;
    }
    case TypeKind::Tile: {
      auto* tt = t->as<TileType>();
      os << "Tile[" << describe_shape(tt->shape) << ", " << to_string(tt->dtype);
      if (tt->memory != MemorySpace::Vec) os << ", " << to_string(tt->memory);
      if (tt->has_valid_shape()) os << ", valid " << describe_shape(tt->valid_shape);
      os << "]";
      break;
    }
    case TypeKind::Tuple: {
      auto* tt = t->as<TupleType>();
      os << "tuple[";
      for (size_t i = 0; i < tt->elements.size(); ++i) os << (i ? ", " : "") << describe(tt->elements[i]);
      os << "]";
      break;
    }
    case TypeKind::Array: {
      auto* at = t->as<ArrayType>();
      os << "Array[" << at->size << ", " << to_string(at->dtype) << "]";
      break;
    }
  }
  return os.str();
}

std::string describe(const ExprPtr& e) {
  if (!e) return "None";
  if (auto* v = as_var(e)) return v->name.empty() ? "_" : v->name;
  if (auto* c = e->as<ConstInt>()) return std::to_string(c->value);
  if (auto* c = e->as<ConstFloat>()) {
    std::ostringstream os;
    os << c->value;
    return os.str();
  }
  if (auto* c = e->as<ConstBool>()) return c->value ? "True" : "False";
  if (auto* b = e->as<BinaryExpr>()) {
    return "(" + describe(b->a) + " " + to_string(b->op) + " " + describe(b->b) + ")";
  }
  if (auto* u = e->as<UnaryExpr>()) return std::string(to_string(u->op)) + (u->op == UnaryOp::Not ? " " : "") + describe(u->a);
  if (auto* c = e->as<Call>()) return c->callee + "(...)";
  if (auto* m = e->as<MakeTuple>()) return describe_shape(m->elements);
  return std::string("<") + to_string(e->kind) + ">";
}

}  // namespace pypto::ir::detail
