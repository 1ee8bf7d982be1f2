// SPDX-License-Identifier: Apache-2.0
// File: the naive reference on hand-worked examples, and the 2x2 matrix product's order.
#include "optcoll/api/reference.h"

#include <cstring>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

Bytes ints(std::initializer_list<std::int32_t> values) {
  Bytes b(values.size() * 4);
  if (!b.empty()) std::memcpy(b.data(), std::data(values), b.size());
  return b;
}

TEST(Reference, GathervAndReduceScatterByHand) {
  const Datatype t = Datatype::int32();
  const ReduceOp sum = ReduceOp::builtin("sum", t);
  const auto gv = reference_outputs(make_spec_v(CollectiveKind::kGatherv, 3, {1, 0, 2}, 1),
                                    {ints({7}), ints({}), ints({8, 9})}, t, sum);
  EXPECT_EQ(gv[1], ints({7, 8, 9}));
  EXPECT_TRUE(gv[0].empty());
  const auto rs = reference_outputs(make_spec_v(CollectiveKind::kReduceScatter, 2, {1, 2}),
                                    {ints({1, 2, 3}), ints({10, 20, 30})}, t, sum);
  EXPECT_EQ(rs[0], ints({11}));
  EXPECT_EQ(rs[1], ints({22, 33}));
  const auto a2a = reference_outputs(make_spec(CollectiveKind::kAlltoall, 2, 1),
                                     {ints({1, 2}), ints({3, 4})}, t, sum);
  EXPECT_EQ(a2a[0], ints({1, 3}));
  EXPECT_EQ(a2a[1], ints({2, 4}));
}

TEST(Reference, MatrixProductIsInRankOrder) {
  const Datatype scalar = Datatype::int32();
  const Datatype mat = matrix_2x2_type(scalar);
  const ReduceOp op = matrix_2x2_product(scalar);
  EXPECT_FALSE(op.commutative);
  // A = [[1,1],[0,1]], B = [[1,0],[1,1]]: AB = [[2,1],[1,1]], BA = [[1,1],[1,2]].
  const Bytes a = ints({1, 1, 0, 1});
  const Bytes b = ints({1, 0, 1, 1});
  const auto out = reference_outputs(make_spec(CollectiveKind::kAllreduce, 2, 1), {a, b}, mat, op);
  EXPECT_EQ(out[0], ints({2, 1, 1, 1}));
  EXPECT_EQ(out[1], ints({2, 1, 1, 1}));
  EXPECT_THROW(matrix_2x2_type(Datatype::float64()), Error);
}

TEST(Reference, ScanAndExscanArePrefixesInRankOrder) {
  const Datatype scalar = Datatype::int32();
  const Datatype mat = matrix_2x2_type(scalar);
  const ReduceOp op = matrix_2x2_product(scalar);
  // A, B as above, C = [[0,1],[1,0]]: AB = [[2,1],[1,1]], (AB)C = [[1,2],[1,1]].
  const std::vector<Bytes> in{ints({1, 1, 0, 1}), ints({1, 0, 1, 1}), ints({0, 1, 1, 0})};
  const auto scan = reference_outputs(make_spec(CollectiveKind::kScan, 3, 1), in, mat, op);
  EXPECT_EQ(scan[0], ints({1, 1, 0, 1}));
  EXPECT_EQ(scan[1], ints({2, 1, 1, 1}));
  EXPECT_EQ(scan[2], ints({1, 2, 1, 1}));
  const auto exscan = reference_outputs(make_spec(CollectiveKind::kExscan, 3, 1), in, mat, op);
  EXPECT_TRUE(exscan[0].empty());  // optcoll's definition of MPI's undefined rank-0 result
  EXPECT_EQ(exscan[1], ints({1, 1, 0, 1}));
  EXPECT_EQ(exscan[2], ints({2, 1, 1, 1}));
}

TEST(Reference, InputsMakeExactReductions) {
  const Bytes prod = make_input(Datatype::float32(), "prod", 3, 5);
  for (std::size_t i = 0; i < 5; ++i) {
    float v = 0;
    std::memcpy(&v, prod.data() + 4 * i, 4);
    EXPECT_TRUE(v == 1.0f || v == 2.0f);
  }
  EXPECT_EQ(make_input(Datatype::int64(), "matmul2", 1, 3).size(), 3u * 32u);
}

}  // namespace
}  // namespace optcoll
