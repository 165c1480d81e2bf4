// Cross-core pipe buffers (spec anchor_features §8): on the reference's hardware a consumer
// kernel reserves on-chip memory for a cross-core ring and the producer imports it by name.
// The CPU has no on-chip memory, so both are accepted and kept (Accept / no-op); the kernel
// binds the buffer's base address (0 for AUTO).
//
//   system.reserve_buffer()     attrs name="ring", size=4096, base=-1 (AUTO) -> Scalar[INT32]
//   system.import_peer_buffer() attrs name="ring", peer_func="consumer"      -> Scalar[INT32]
//   (the import's peer base is the typed Call::peer_base, printed first as base=256, and the address
//   either binds on the CPU is Call::cpu_base; ResolvePeerBufferBases stamps both)
//   system.aic_initialize_pipe(c2v_buf, v2c_buf) attrs dir_mask=1, slot_size=512 -> unit (no-op)
//   system.aiv_initialize_pipe(c2v_buf, v2c_buf) likewise
#include <cctype>

#include "op_util.h"
#include "pypto/ir/error.h"

namespace pypto::ir::ops {

namespace {

const std::string& string_attr(const std::string& op, const Attrs& attrs, const std::string& key, const Span& span) {
  auto* s = attr_get<std::string>(attrs, key);
  PYPTO_USER_CHECK(s, span, op << ": " << key << "= must be a string", "e.g. " + key + "=\"ring\"");
  bool ident = !s->empty() && (std::isalpha(static_cast<unsigned char>((*s)[0])) || (*s)[0] == '_');
  for (char c : *s) ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
  PYPTO_USER_CHECK(ident, span, op << ": " << key << "='" << *s << "' must be an identifier", "");
  return *s;
}

int64_t int_attr(const std::string& op, const Attrs& attrs, const std::string& key, const Span& span) {
  auto* v = attr_get<int64_t>(attrs, key);
  PYPTO_USER_CHECK(v, span, op << ": " << key << "= must be an int", "");
  return *v;
}

}  // namespace

void register_pipe_buffer_ops(OpRegistry& r) {
  add_op(r, "system.reserve_buffer", {}, {"name", "size", "base"},
         "Reserve `size` bytes of on-chip memory for a cross-core pipe under `name` (CPU: no-op; value = base, 0 for AUTO).",
         [](const std::vector<ExprPtr>&, const Attrs& attrs, const Span& span) -> TypePtr {
           string_attr("system.reserve_buffer", attrs, "name", span);
           PYPTO_USER_CHECK(int_attr("system.reserve_buffer", attrs, "size", span) > 0, span,
                            "system.reserve_buffer: size= must be positive", "");
           int64_t base = int_attr("system.reserve_buffer", attrs, "base", span);
           PYPTO_USER_CHECK(base >= -1, span, "system.reserve_buffer: base= must be >= 0 or pl.AUTO (-1)", "");
           return ScalarType::make(DataType::INT32);
         });
  add_op(r, "system.import_peer_buffer", {}, {"name", "peer_func"},
         "The pipe buffer `name` reserved by kernel `peer_func` (CPU: no-op; value = the peer's base, 0 for AUTO).",
         [](const std::vector<ExprPtr>&, const Attrs& attrs, const Span& span) -> TypePtr {
           string_attr("system.import_peer_buffer", attrs, "name", span);
           string_attr("system.import_peer_buffer", attrs, "peer_func", span);
           return ScalarType::make(DataType::INT32);
         });
  for (const char* name : {"system.aic_initialize_pipe", "system.aiv_initialize_pipe"}) {
    add_op(r, name, {"c2v_consumer_buf", "v2c_consumer_buf"}, {"dir_mask", "slot_size"},
           "Set up a cross-core pipe over the given consumer buffers (CPU: no-op).",
           [name](const std::vector<ExprPtr>& args, const Attrs& attrs, const Span& span) -> TypePtr {
             const std::string op = name;
             const int64_t mask = int_attr(op, attrs, "dir_mask", span);
             PYPTO_USER_CHECK(mask >= 1 && mask <= 3, span, op << ": dir_mask=" << mask << " must be 1, 2 or 3",
                              "1 = cube-to-vector, 2 = vector-to-cube, 3 = both");
             PYPTO_USER_CHECK(int_attr(op, attrs, "slot_size", span) > 0, span, op << ": slot_size= must be positive",
                              "the bytes of one pipe slot");
             for (const auto& a : args) {
               auto* st = a->type ? a->type->as<ScalarType>() : nullptr;
               PYPTO_USER_CHECK(st && is_integer(st->dtype), a->span,
                                op << ": a consumer buffer must be an integer scalar (a pl.reserve_buffer result)", "");
             }
             return TupleType::unit();
           });
  }
}

}  // namespace pypto::ir::ops
