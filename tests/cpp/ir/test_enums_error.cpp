// Enum spellings, dtype predicates and the rendering of UserError.
#include "ir_test_util.h"

namespace pypto::ir {
namespace {

TEST(Enums, DataTypeRoundTrip) {
  for (int i = 0; i <= static_cast<int>(DataType::TASK_ID); ++i) {
    auto d = static_cast<DataType>(i);
    DataType back;
    ASSERT_TRUE(parse_data_type(to_string(d), &back)) << to_string(d);
    EXPECT_EQ(back, d);
  }
  DataType x;
  EXPECT_FALSE(parse_data_type("FP64", &x));
  EXPECT_FALSE(parse_data_type("fp32", &x));
  EXPECT_STREQ(to_string(DataType::TASK_ID), "TASK_ID");
}

TEST(Enums, OtherSpellings) {
  MemorySpace m;
  ASSERT_TRUE(parse_memory_space("Left", &m));
  EXPECT_EQ(m, MemorySpace::Left);
  EXPECT_FALSE(parse_memory_space("UB", &m));
  FunctionType ft;
  ASSERT_TRUE(parse_function_type("Orchestration", &ft));
  EXPECT_EQ(ft, FunctionType::Orchestration);
  Level l;
  ASSERT_TRUE(parse_level("CORE_GROUP", &l));
  EXPECT_EQ(l, Level::CORE_GROUP);
  Role r;
  ASSERT_TRUE(parse_role("Worker", &r));
  EXPECT_EQ(r, Role::Worker);
  Layout lay;
  ASSERT_TRUE(parse_layout("DN", &lay));
  EXPECT_EQ(lay, Layout::DN);
  EXPECT_STREQ(to_string(BinaryOp::FloorDiv), "//");
  EXPECT_STREQ(to_string(BinaryOp::And), "and");
  EXPECT_STREQ(to_string(UnaryOp::Not), "not");
  EXPECT_STREQ(to_string(ArgDirection::NoDep), "NoDep");
  EXPECT_STREQ(to_string(RuntimeScopeMode::Manual), "Manual");
  EXPECT_STREQ(to_string(NodeKind::RuntimeScopeStmt), "RuntimeScopeStmt");
  EXPECT_STREQ(to_string(NodeKind::IterArg), "IterArg");
}

TEST(Enums, Predicates) {
  EXPECT_TRUE(is_float(DataType::BF16));
  EXPECT_FALSE(is_float(DataType::INT32));
  EXPECT_TRUE(is_integer(DataType::INDEX));
  EXPECT_TRUE(is_integer(DataType::UINT8));
  EXPECT_FALSE(is_integer(DataType::BOOL));
  EXPECT_FALSE(is_integer(DataType::TASK_ID));
  EXPECT_TRUE(is_signed(DataType::INT16));
  EXPECT_FALSE(is_signed(DataType::UINT64));
  EXPECT_EQ(bit_width(DataType::FP16), 16);
  EXPECT_EQ(bit_width(DataType::INDEX), 64);
  EXPECT_EQ(bit_width(DataType::TASK_ID), 64);
  EXPECT_EQ(bit_width(DataType::INT8), 8);
}

TEST(UserErrorRender, WithSpanAndHelp) {
  Span s = test::span_at(12, 9, 23, "    c = self.kernel_ad(a, b)");
  UserError e("unknown function 'kernel_ad'", s, "did you mean 'kernel_add'?");
  EXPECT_EQ(std::string(e.what()),
            "error: unknown function 'kernel_ad' --> prog.py:12:9\n"
            "   |\n"
            "12 |     c = self.kernel_ad(a, b)\n"
            "   |         ^^^^^^^^^^^^^^\n"
            "help: did you mean 'kernel_add'?");
  EXPECT_EQ(e.message(), "unknown function 'kernel_ad'");
  EXPECT_EQ(e.help(), "did you mean 'kernel_add'?");
  EXPECT_EQ(e.span().line, 12);
}

TEST(UserErrorRender, AtLeastOneCaretAndNoHelp) {
  Span s = test::span_at(3, 1, 1, "x");
  EXPECT_EQ(UserError::render("bad", s, ""), "error: bad --> prog.py:3:1\n  |\n3 | x\n  | ^");
}

TEST(UserErrorRender, UnknownSpan) {
  EXPECT_EQ(UserError::render("bad thing", Span::unknown(), ""), "error: bad thing");
  EXPECT_EQ(UserError::render("bad thing", Span::unknown(), "fix it"), "error: bad thing\nhelp: fix it");
}

TEST(UserErrorRender, MultiLineSpanUnderlinesToEndOfLine) {
  Span s = test::span_at(5, 5, 0, "    with pl.at(");
  s.end_line = 7;
  EXPECT_EQ(UserError::render("m", s, ""), "error: m --> prog.py:5:5\n  |\n5 |     with pl.at(\n  |     ^^^^^^^^^^^");
}

TEST(UserErrorRender, CaretFollowsTabsAndCountsCharacters) {
  // A tab before the column stays a tab (the caret lines up at any tab width); a two-byte
  // character is one column, as Span columns count characters.
  EXPECT_EQ(UserError::render("m", test::span_at(4, 3, 6, "\t\tfoo(a)"), ""),
            "error: m --> prog.py:4:3\n  |\n4 | \t\tfoo(a)\n  | \t\t^^^");
  EXPECT_EQ(UserError::render("m", test::span_at(2, 9, 12, "s = '\xc3\xa9'; foo"), ""),
            "error: m --> prog.py:2:9\n  |\n2 | s = '\xc3\xa9'; foo\n  |         ^^^");
}

TEST(InternalErrorCheck, ThrowsWithMessage) {
  try {
    PYPTO_CHECK(1 + 1 == 3, "math is " << "broken");
    FAIL();
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("internal error: math is broken"), std::string::npos);
  }
}

}  // namespace
}  // namespace pypto::ir
