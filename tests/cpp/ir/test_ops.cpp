// Type inference of every registered op, including the UserErrors of misuse.
#include "ir_test_util.h"

namespace pypto::ir {
namespace {

using namespace test;

Attrs dt(const std::string& d) { return {{"dtype", d}}; }

void expect_type(const ExprPtr& e, const TypePtr& want) {
  EXPECT_TRUE(structural_equal(e->type, want)) << "got kind " << static_cast<int>(e->type->kind);
}

TEST(OpRegistry, EveryOpHasArgNamesAndDoc) {
  auto names = OpRegistry::global().names();
  // the reference ops (reference_ops.md) included, tile.read/write, barriers, tensor.write; + anchor_features:
  // tensor.reshape, 31 tensor.<op> mirrors of tile ops (§9) + 7 of the reference's tensor-only names
  // (sin, cos, gather, scatter, scatter_update, gather_row, arange) + 25 of its dispatching names (cmp, concat,
  // fillpad, expands, row_prod, col_*, row_expand*, col_expand*, part_*), 2 pipe-buffer ops + 2 initialize_pipe (§8)
  // + system.task_ref (AutoDeriveTaskDependencies' placeholder, docs/auto_dependencies.md)
  // + tile.mrgsort_format2 (registered so it gets the accelerator-only refusal, reference_ops.md §13)
  // + tensor.set_validshape (the tensor form of tile.set_validshape)
  // + tensor.batch_matmul (the tensor form of tile.batch_matmul, reference_ops.md §11)
  // + system.assert (Python's assert statement, docs/dsl.md)
  EXPECT_EQ(names.size(), 138u + 1u + 31u + 7u + 25u + 2u + 2u + 1u + 1u + 2u + 1u + 1u + 1u);   // + set_validshape, fillpad_inplace
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  for (auto& n : names) {
    const OpInfo* info = OpRegistry::global().get(n);
    ASSERT_TRUE(info);
    EXPECT_EQ(info->name, n);
    EXPECT_FALSE(info->doc.empty()) << n;
    EXPECT_TRUE(info->infer) << n;
  }
  for (const char* n : {"tensor.create", "tensor.read", "tensor.slice", "tensor.transpose", "tensor.dim", "tensor.assemble",
                        "tile.load", "tile.store", "tile.matmul_acc", "tile.row_expand_div", "tile.get_block_num",
                        "system.task_invalid", "system.task_dummy", "system.assert", "array.create", "array.get_element",
                        "array.update_element"}) {
    EXPECT_TRUE(OpRegistry::global().get(n)) << n;
  }
  EXPECT_EQ(OpRegistry::global().get("tile.load")->arg_names, (std::vector<std::string>{"tensor", "offsets", "shapes", "valid_shapes"}));
  EXPECT_EQ(OpRegistry::global().get("nope"), nullptr);
}

TEST(OpRegistry, DuplicateIsInternalError) {
  OpRegistry r;
  OpInfo info;
  info.name = "x.y";
  info.infer = [](const std::vector<ExprPtr>&, const Attrs&, const Span&) -> TypePtr { return ScalarType::make(DataType::BOOL); };
  r.add(info);
  EXPECT_THROW(r.add(info), InternalError);
  EXPECT_EQ(r.names(), std::vector<std::string>{"x.y"});
}

// ---- tensor ops ----

TEST(TensorOps, Create) {
  expect_type(op("tensor.create", {list({16, 32})}, dt("FP16")), tensor({16, 32}, DataType::FP16));
  auto m = var("M", scalar(DataType::INDEX));
  auto c = op("tensor.create", {MakeTuple::make({m, I(4)})}, {{"dtype", std::string("FP32")}, {"manual_dep", true}});
  expect_type(c, TensorType::make({m, I(4)}, DataType::FP32));
  auto dn = op("tensor.create", {list({4, 4})}, {{"dtype", std::string("FP32")}, {"layout", std::string("DN")}});
  EXPECT_EQ(dn->type->as<TensorType>()->layout, Layout::DN);
  expect_user_error([] { op("tensor.create", {list({16})}); }, "tensor.create: missing dtype");
  expect_user_error([] { op("tensor.create", {list({16})}, dt("FP64")); }, "unknown dtype 'FP64'");
  expect_user_error([] { op("tensor.create", {I(16)}, dt("FP32")); }, "argument 'shape' must be a list of integers");
  expect_user_error([] { op("tensor.create", {MakeTuple::make({F(1.0)})}, dt("FP32")); }, "element 0 of 'shape' must be an integer");
  expect_user_error([] { op("tensor.create", {list({0})}, dt("FP32")); }, "must be positive");
  expect_user_error([] { op("tensor.create", {list({4})}, {{"dtype", std::string("FP32")}, {"manual_dep", int64_t{1}}}); },
                    "manual_dep must be True or False");
}

TEST(TensorOps, ReadSliceTransposeDimAssemble) {
  auto t = var("t", tensor({16, 32}));
  expect_type(op("tensor.read", {t, list({1, 2})}), scalar(DataType::FP32));
  Span s = span_at(3, 9, 30, "    x = pl.tensor.read(t, [1])");
  auto e = expect_user_error([&] { op("tensor.read", {t, list({1})}, {}, s); }, "indices has 1 entries but the tensor");
  EXPECT_EQ(e.span().line, 3);
  expect_user_error([&] { op("tensor.read", {var("x", tile({4})), list({1})}); }, "argument 'tensor' must be a Tensor, got Tile[[4], FP32]");

  expect_type(op("tensor.slice", {t, list({8, 16}), list({8, 0})}), tensor({8, 16}));
  expect_user_error([&] { op("tensor.slice", {t, list({8}), list({8, 0})}); }, "shapes has 1 entries");
  // anchor_features §18: a partial overhang is clamped at run time; an offset at or past the end is an error.
  expect_type(op("tensor.slice", {t, list({8, 16}), list({12, 0})}), tensor({8, 16}));
  expect_user_error([&] { op("tensor.slice", {t, list({8, 16}), list({16, 0})}); },
                    "offset 16 of dimension 0 is at or past the end of the tensor shape [16, 32]");

  expect_type(op("tensor.transpose", {t, I(0), I(1)}), tensor({32, 16}));
  expect_user_error([&] { op("tensor.transpose", {t, I(0), I(2)}); }, "axis 2 out of range");
  expect_user_error([&] { op("tensor.transpose", {t, I(0), var("k", scalar(DataType::INDEX))}); },
                    "argument 'axis2' must be an integer constant");

  expect_type(op("tensor.dim", {t, I(1)}), scalar(DataType::INDEX));
  expect_user_error([&] { op("tensor.dim", {t, I(5)}); }, "axis 5 out of range");

  auto src = var("s", tensor({8, 32}));
  auto asm_ = op("tensor.assemble", {t, src, list({8, 0})});
  EXPECT_EQ(asm_->type, t->type);
  expect_user_error([&] { op("tensor.assemble", {t, var("h", tensor({8, 32}, DataType::FP16)), list({8, 0})}); },
                    "source dtype FP16 differs from target dtype FP32");
  expect_user_error([&] { op("tensor.assemble", {t, var("v", tensor({8})), list({8, 0})}); }, "differ in rank");
}

// ---- tile ops ----

TEST(TileOps, LoadStore) {
  auto a = var("a", tensor({64, 64}, DataType::FP16));
  expect_type(op("tile.load", {a, list({0, 16}), list({16, 16})}), tile({16, 16}, DataType::FP16));
  auto l = op("tile.load", {a, list({0, 0}), list({16, 16})}, {{"target_memory", std::string("Mat")}});
  EXPECT_EQ(l->type->as<TileType>()->memory, MemorySpace::Mat);
  auto v = var("v", tensor({128}));
  expect_type(op("tile.load", {v, list({0}), list({64})}), tile({64}));
  expect_user_error([&] { op("tile.load", {a, list({0}), list({16, 16})}); }, "1 offsets for a tensor of shape [64, 64]");
  expect_user_error([&] { op("tile.load", {a, list({0, 0}), list({16})}); }, "different rank");
  expect_user_error([&] { op("tile.load", {a, list({0, 0}), list({16, 16})}, {{"target_memory", std::string("UB")}}); },
                    "unknown memory space 'UB'");
  auto t3 = var("t3", tensor({2, 2, 2}));
  expect_user_error([&] { op("tile.load", {t3, list({0, 0, 0}), list({2, 2, 2})}); }, "must be 1-D or 2-D, got rank 3");

  expect_user_error([&] { op("tile.load", {a, list({0, 56}), list({16, 16})}); },
                    "tile.load: block [56, 72) of dimension 1 is outside the tensor shape [64, 64]");
  auto tl = var("x", tile({16, 16}, DataType::FP16));
  expect_user_error([&] { op("tile.store", {tl, list({64, 0}), a}); }, "block [64, 80) of dimension 0 is outside");
  auto st = op("tile.store", {tl, list({0, 0}), a});
  EXPECT_EQ(st->type, a->type);
  expect_user_error([&] { op("tile.store", {var("y", tile({16, 16})), list({0, 0}), a}); },
                    "tile.store: dtype mismatch: tile Tile[[16, 16], FP32] vs tensor Tensor[[64, 64], FP16]");
  expect_user_error([&] { op("tile.store", {a, list({0, 0}), a}); }, "argument 'tile' must be a Tile");
}

TEST(TileOps, ElementwiseBinary) {
  auto x = var("x", tile({16, 16}));
  for (const char* n : {"tile.add", "tile.sub", "tile.mul", "tile.div", "tile.maximum", "tile.minimum"}) {
    EXPECT_EQ(op(n, {x, var("y", tile({16, 16}))})->type, x->type) << n;
    EXPECT_EQ(op(n, {x, F(2.0)})->type, x->type) << n;
    EXPECT_EQ(op(n, {x, var("s", scalar(DataType::FP32))})->type, x->type) << n;
  }
  expect_user_error([&] { op("tile.add", {x, var("y", tile({16, 8}))}); },
                    "tile.add: requires compatible shapes, but got [16, 16] and [16, 8]");
  // add/sub/mul/div promote mixed dtypes (reference_ops.md §1.3); maximum/minimum do not.
  expect_type(op("tile.mul", {x, var("y", tile({16, 16}, DataType::FP16))}), tile({16, 16}, DataType::FP32));
  expect_type(op("tile.add", {var("i", tile({16, 16}, DataType::INT32)), var("h", tile({16, 16}, DataType::FP16))}),
              tile({16, 16}, DataType::FP16));
  expect_user_error([&] { op("tile.maximum", {x, var("y", tile({16, 16}, DataType::FP16))}); }, "dtype mismatch");
  EXPECT_EQ(ir::ops::PromoteDataTypes(DataType::UINT32, DataType::INT32), DataType::INT32);
  EXPECT_EQ(ir::ops::PromoteDataTypes(DataType::BF16, DataType::FP16), DataType::BF16);
  EXPECT_EQ(ir::ops::PromoteDataTypes(DataType::INT8, DataType::INDEX), DataType::INDEX);
  expect_user_error([&] { op("tile.add", {var("a", tensor({16, 16})), x}); }, "argument 'a' must be a Tile, got Tensor");
  expect_user_error([&] { op("tile.add", {x, var("a", tensor({16, 16}))}); }, "argument 'b' must be a Tile or a scalar");
  // A dynamic dim matches itself.
  auto m = var("M", scalar(DataType::INDEX));
  auto d1 = var("d1", TileType::make({m, I(16)}, DataType::FP32));
  auto d2 = var("d2", TileType::make({m, I(16)}, DataType::FP32));
  EXPECT_NO_THROW(op("tile.add", {d1, d2}));
}

TEST(TileOps, UnaryAndReductions) {
  auto x = var("x", tile({16, 32}));
  for (const char* n : {"tile.exp", "tile.log", "tile.sqrt", "tile.rsqrt", "tile.recip", "tile.neg", "tile.abs", "tile.relu"}) {
    EXPECT_EQ(op(n, {x})->type, x->type) << n;
  }
  expect_user_error([&] { op("tile.exp", {F(1.0)}); }, "tile.exp: argument 'a' must be a Tile, got Scalar[FP32]");
  for (const char* n : {"tile.row_max", "tile.row_sum", "tile.row_min"}) expect_type(op(n, {x}), tile({16, 1}));
  expect_user_error([&] { op("tile.row_sum", {var("v", tile({16}))}); }, "must be a 2-D tile");

  auto r = var("r", tile({16, 1}));
  for (const char* n : {"tile.row_expand_add", "tile.row_expand_sub", "tile.row_expand_mul", "tile.row_expand_div"}) {
    EXPECT_EQ(op(n, {x, r})->type, x->type) << n;
  }
  expect_user_error([&] { op("tile.row_expand_sub", {x, var("r2", tile({8, 1}))}); },
                    "shape mismatch: a is [16, 32], row must be [16, 1], got [8, 1]");
  expect_user_error([&] { op("tile.row_expand_sub", {x, var("r3", tile({16, 2}))}); }, "got [16, 2]");
}

TEST(TileOps, Matmul) {
  auto a = var("a", tile({16, 32}, DataType::FP16, MemorySpace::Left));
  auto b = var("b", tile({32, 8}, DataType::FP16, MemorySpace::Right));
  auto c = op("tile.matmul", {a, b});
  expect_type(c, tile({16, 8}, DataType::FP32, MemorySpace::Acc));
  EXPECT_EQ(op("tile.matmul_acc", {c, a, b})->type, c->type);
  expect_user_error([&] { op("tile.matmul", {a, var("b3", tile({32, 8}))}); }, "tile.matmul: dtype mismatch: a is FP16, b is FP32");
  expect_user_error([&] { op("tile.matmul", {a, var("b2", tile({16, 8}, DataType::FP16))}); },
                    "tile.matmul: inner dimensions differ: a is [16, 32], b is [16, 8]");
  expect_user_error([&] { op("tile.matmul_acc", {var("acc", tile({16, 16})), a, b}); },
                    "acc shape [16, 16] does not match a @ b shape [16, 8]");
}

TEST(TileOps, MoveCastFullBlock) {
  auto x = var("x", tile({16, 16}, DataType::FP16, MemorySpace::Mat));
  expect_type(op("tile.move", {x}, {{"target_memory", std::string("Left")}}), tile({16, 16}, DataType::FP16, MemorySpace::Left));
  expect_user_error([&] { op("tile.move", {x}); }, "tile.move: missing target_memory");
  expect_type(op("tile.cast", {x}, dt("FP32")), tile({16, 16}, DataType::FP32, MemorySpace::Mat));
  expect_user_error([&] { op("tile.cast", {x}); }, "missing dtype");
  expect_user_error([&] { op("tile.cast", {x}, dt("FP16")); },
                    "tile.cast: the tile is already FP16; casting to the same dtype is an error");
  expect_type(op("tile.full", {list({8, 8}), F(0.0)}, dt("FP32")), tile({8, 8}));
  expect_type(op("tile.full", {list({8}), I(1)}, dt("INT32")), tile({8}, DataType::INT32));
  expect_user_error([&] { op("tile.full", {list({8, 8}), x}, dt("FP32")); }, "argument 'value' must be a numeric scalar");
  expect_type(op("tile.get_block_idx", {}), scalar(DataType::INDEX));
  expect_type(op("tile.get_block_num", {}), scalar(DataType::INDEX));
  expect_user_error([&] { op("tile.get_block_idx", {I(0)}); }, "expects 0 arguments");
}

// ---- system and array ops ----

TEST(SystemOps, TaskInvalidAndDummy) {
  expect_type(op("system.task_invalid", {}), scalar(DataType::TASK_ID));
  auto t1 = var("t1", scalar(DataType::TASK_ID));
  auto arr = var("tids", ArrayType::make(4, DataType::TASK_ID));
  auto d = op("system.task_dummy", {}, {{"manual_dep_edges", std::vector<ExprPtr>{t1, arr}}, {"dummy_task", true}});
  expect_type(d, scalar(DataType::TASK_ID));
  // The edges are the typed Call::manual_dep_edges, not an attr.
  ASSERT_EQ(d->as<Call>()->manual_dep_edges.size(), 2u);
  EXPECT_EQ(d->as<Call>()->manual_dep_edges[1], arr);
  EXPECT_EQ(d->as<Call>()->attrs.count("manual_dep_edges"), 0u);
  expect_user_error([&] { op("system.task_dummy", {}, {{"manual_dep_edges", std::vector<ExprPtr>{var("a", tensor({4}))}}}); },
                    "deps= entries must be TaskIds");
  expect_user_error([&] { op("system.task_dummy", {}, {{"manual_dep_edges", int64_t{3}}}); }, "must be a list of TaskIds");
}

TEST(ArrayOps, CreateGetUpdate) {
  auto c = op("array.create", {}, {{"size", int64_t{4}}, {"dtype", std::string("TASK_ID")}});
  expect_type(c, ArrayType::make(4, DataType::TASK_ID));
  expect_user_error([] { op("array.create", {}, {{"dtype", std::string("TASK_ID")}}); }, "missing integer size");
  expect_user_error([] { op("array.create", {}, {{"size", int64_t{0}}, {"dtype", std::string("TASK_ID")}}); },
                    "size must be positive");
  auto arr = var("tids", ArrayType::make(4, DataType::TASK_ID));
  auto k = var("k", scalar(DataType::INDEX));
  expect_type(op("array.get_element", {arr, k}), scalar(DataType::TASK_ID));
  expect_user_error([&] { op("array.get_element", {arr, I(4)}); }, "index 4 out of range for Array[4, TASK_ID]");
  expect_user_error([&] { op("array.get_element", {var("a", tensor({4})), k}); }, "argument 'array' must be an Array");
  expect_user_error([&] { op("array.get_element", {arr, F(1.0)}); }, "argument 'index' must be an integer scalar");
  auto tid = var("tid", scalar(DataType::TASK_ID));
  EXPECT_EQ(op("array.update_element", {arr, k, tid})->type, arr->type);
  expect_user_error([&] { op("array.update_element", {arr, k, I(3)}); },
                    "cannot store Scalar[INDEX] into Array[4, TASK_ID]");
  auto ints = var("ints", ArrayType::make(2, DataType::INT64));
  EXPECT_NO_THROW(op("array.update_element", {ints, I(1), I(3)}));
  expect_user_error([&] { op("array.update_element", {ints, I(1), tid}); }, "cannot store Scalar[TASK_ID]");
}

}  // namespace
}  // namespace pypto::ir
