// ScalarType::make: the scalar types are interned, one per dtype (types are immutable values).
#include "pypto/ir/type.h"

namespace pypto::ir {

std::shared_ptr<const ScalarType> ScalarType::make(DataType d) {
  constexpr size_t kDtypes = static_cast<size_t>(DataType::TASK_ID) + 1;
  static const auto* table = [] {
    auto* t = new std::shared_ptr<const ScalarType>[kDtypes];   // never freed: types outlive static destruction
    for (size_t i = 0; i < kDtypes; ++i) t[i] = make_node<ScalarType>(static_cast<DataType>(i));
    return t;
  }();
  const auto i = static_cast<size_t>(d);
  return i < kDtypes ? table[i] : make_node<ScalarType>(d);
}

}  // namespace pypto::ir
