// SPDX-License-Identifier: Apache-2.0
// File: tests of collective specs: validation messages, buffer layouts, postconditions.
#include "optcoll/model/collective.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

// Expects validate(spec) to throw kInvalidArgument with `fragment` in the message.
void expect_invalid(const CollectiveSpec& spec, const std::string& fragment) {
  try {
    validate(spec);
    FAIL() << "expected an error containing '" << fragment << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(CollectiveNames, RoundTripEveryKind) {
  EXPECT_EQ(all_collectives().size(), 16u);
  for (const auto kind : all_collectives()) {
    const auto parsed = parse_collective(collective_name(kind));
    ASSERT_TRUE(parsed.has_value()) << collective_name(kind);
    EXPECT_EQ(*parsed, kind);
  }
  EXPECT_FALSE(parse_collective("allgatherw").has_value());
  EXPECT_EQ(parse_collective("reduce_scatter_block"), CollectiveKind::kReduceScatterBlock);
  EXPECT_EQ(parse_collective("scan"), CollectiveKind::kScan);
  EXPECT_EQ(parse_collective("exscan"), CollectiveKind::kExscan);
  EXPECT_EQ(collective_name(CollectiveKind::kExscan), "exscan");
}

TEST(CollectiveKinds, ScanAndExscanAreUnrootedRegularReductions) {
  for (const auto kind : {CollectiveKind::kScan, CollectiveKind::kExscan}) {
    SCOPED_TRACE(collective_name(kind));
    EXPECT_TRUE(is_reduction(kind));
    EXPECT_FALSE(is_rooted(kind));
    EXPECT_FALSE(takes_counts(kind));
    EXPECT_TRUE(count_is_message(kind));
    EXPECT_FALSE(needs_synchronization(kind));
  }
  EXPECT_FALSE(count_is_message(CollectiveKind::kAllgather));
  expect_invalid(CollectiveSpec{CollectiveKind::kScan, 4, 1, 3, {}}, "scan has no root");
  expect_invalid(CollectiveSpec{CollectiveKind::kExscan, 4, 0, 0, {1, 2, 3, 4}},
                 "exscan takes a uniform count");
}

// The traits table against what validation independently accepts: a root other than 0 only
// for rooted kinds, per-rank counts only for the kinds that take them.
TEST(CollectiveKinds, TraitsAgreeWithWhatValidationAccepts) {
  for (const auto kind : all_collectives()) {
    SCOPED_TRACE(collective_name(kind));
    if (kind == CollectiveKind::kBarrier) continue;
    const bool accepts_root = [&] {
      try {
        validate(CollectiveSpec{
            kind, 3, /*root=*/1, /*count=*/takes_counts(kind) ? 0 : 1,
            takes_counts(kind) ? std::vector<Count>(kind == CollectiveKind::kAlltoallv ? 9 : 3, 1)
                               : std::vector<Count>{}});
        return true;
      } catch (const Error&) {
        return false;
      }
    }();
    EXPECT_EQ(accepts_root, is_rooted(kind));
    const bool accepts_counts = [&] {
      try {
        validate(CollectiveSpec{kind, 2, 0, 0,
                                std::vector<Count>(kind == CollectiveKind::kAlltoallv ? 4 : 2, 1)});
        return true;
      } catch (const Error&) {
        return false;
      }
    }();
    EXPECT_EQ(accepts_counts, takes_counts(kind));
  }
  // A value outside the enumeration (a corrupt spec) has a name that says so and no traits.
  const auto stray = static_cast<CollectiveKind>(200);
  EXPECT_EQ(collective_name(stray), "unknown");
  EXPECT_FALSE(is_rooted(stray) || takes_counts(stray) || is_reduction(stray) ||
               count_is_message(stray));
  expect_invalid(CollectiveSpec{stray, 2, 1, 0, {}}, "unknown collective kind 200");
}

TEST(CollectiveValidate, NamesEachProblem) {
  expect_invalid(CollectiveSpec{CollectiveKind::kBcast, 0, 0, 4, {}},
                 "nranks must be at least 1, got 0");
  expect_invalid(CollectiveSpec{CollectiveKind::kBcast, -3, 0, 4, {}}, "got -3");
  expect_invalid(CollectiveSpec{CollectiveKind::kGather, 8, 9, 4, {}},
                 "root 9 out of range for nranks 8");
  expect_invalid(CollectiveSpec{CollectiveKind::kReduce, 8, -1, 4, {}}, "root -1 out of range");
  expect_invalid(CollectiveSpec{CollectiveKind::kAllreduce, 8, 3, 4, {}}, "allreduce has no root");
  expect_invalid(CollectiveSpec{CollectiveKind::kBcast, 4, 0, -5, {}},
                 "count must be non-negative, got -5");
  expect_invalid(CollectiveSpec{CollectiveKind::kGatherv, 4, 0, 0, {1, 2, 3}},
                 "gatherv needs 4 counts (one per rank), got 3");
  expect_invalid(CollectiveSpec{CollectiveKind::kAlltoallv, 3, 0, 0, {1, 2, 3}},
                 "alltoallv needs 9 counts");
  expect_invalid(CollectiveSpec{CollectiveKind::kScatterv, 3, 0, 0, {1, -2, 3}},
                 "counts[1] is negative (-2)");
  expect_invalid(CollectiveSpec{CollectiveKind::kGather, 3, 0, 0, {1, 2, 3}},
                 "takes a uniform count");
  expect_invalid(CollectiveSpec{CollectiveKind::kGatherv, 3, 0, 5, {1, 2, 3}},
                 "takes per-rank counts");
  expect_invalid(CollectiveSpec{CollectiveKind::kBarrier, 3, 0, 5, {}}, "barrier carries no data");
  const Count huge = kMaxCount / 2 + 1;
  expect_invalid(CollectiveSpec{CollectiveKind::kGatherv, 2, 0, 0, {huge, huge}},
                 "sum of counts exceeds");
  expect_invalid(CollectiveSpec{CollectiveKind::kAllgather, 1024, 0, kMaxCount / 512, {}},
                 "exceeds the limit");
  CollectiveSpec bytes{CollectiveKind::kBcast, 2, 0, 1, {}};
  bytes.elem_bytes = 0;
  expect_invalid(bytes, "elem_bytes");
}

// docs/errors.md: the limits and the kind, each with its own message.
TEST(CollectiveValidate, NamesEachLimit) {
  expect_invalid(CollectiveSpec{static_cast<CollectiveKind>(99), 2, 0, 1, {}},
                 "unknown collective kind 99");
  expect_invalid(CollectiveSpec{CollectiveKind::kBcast, (Rank{1} << 24) + 1, 0, 1, {}},
                 "bcast: nranks 16777217 exceeds the limit of 2^24");
  expect_invalid(CollectiveSpec{CollectiveKind::kBcast, 2, 0, kMaxCount + 1, {}},
                 "bcast: count 281474976710657 exceeds 2^48");
  expect_invalid(CollectiveSpec{CollectiveKind::kAllgather, 1024, 0, kMaxCount / 512, {}},
                 "allgather buffer exceeds the limit of 2^48 elements (549755813888 x 1024)");
  CollectiveSpec bytes{CollectiveKind::kBcast, 2, 0, 1, {}};
  bytes.elem_bytes = 4097;
  expect_invalid(bytes, "bcast: elem_bytes must be in 1..4096, got 4097");
}

TEST(CollectiveValidate, AcceptsEdgeCases) {
  EXPECT_NO_THROW(validate(make_spec(CollectiveKind::kBcast, 1, 0)));
  EXPECT_NO_THROW(validate(make_spec_v(CollectiveKind::kGatherv, 3, {0, 0, 0}, 2)));
  EXPECT_NO_THROW(validate(make_spec(CollectiveKind::kBarrier, 64, 0)));
  EXPECT_NO_THROW(
      validate(make_spec_v(CollectiveKind::kGatherv, 2, {kMaxCount / 2, kMaxCount / 2})));
}

TEST(Layout, GathervDisplacementsAndSizes) {
  const Layout layout(make_spec_v(CollectiveKind::kGatherv, 4, {3, 0, 5, 2}, 1));
  EXPECT_EQ(layout.total(), 10);
  EXPECT_EQ(layout.displ(0), 0);
  EXPECT_EQ(layout.displ(2), 3);
  EXPECT_EQ(layout.displ(3), 8);
  EXPECT_EQ(layout.input_count(2), 5);
  EXPECT_EQ(layout.output_count(1), 10);  // the root
  EXPECT_EQ(layout.output_count(0), 0);
}

TEST(Layout, SizesOfEveryRegularKind) {
  const Rank p = 4;
  const Count n = 6;
  struct Expect {
    CollectiveKind kind;
    Count root_in, root_out, other_in, other_out;
  };
  const Expect table[] = {
      {CollectiveKind::kBcast, 0, n, 0, n},
      {CollectiveKind::kReduce, n, n, n, 0},
      {CollectiveKind::kAllreduce, n, n, n, n},
      {CollectiveKind::kScatter, p * n, n, 0, n},
      {CollectiveKind::kGather, n, p * n, n, 0},
      {CollectiveKind::kAllgather, n, p * n, n, p * n},
      {CollectiveKind::kReduceScatterBlock, p * n, n, p * n, n},
      {CollectiveKind::kScan, n, n, n, n},
      {CollectiveKind::kExscan, n, 0, n, n},  // "root" is rank 0 here: no exscan output
      {CollectiveKind::kAlltoall, p * n, p * n, p * n, p * n},
      {CollectiveKind::kBarrier, 0, 0, 0, 0},
  };
  for (const auto& e : table) {
    const bool rooted = is_rooted(e.kind);
    const Layout layout(
        make_spec(e.kind, p, e.kind == CollectiveKind::kBarrier ? 0 : n, rooted ? 2 : 0));
    SCOPED_TRACE(collective_name(e.kind));
    const Rank root = rooted ? 2 : 0;
    const Rank other = 3;
    EXPECT_EQ(layout.input_count(root), e.root_in);
    EXPECT_EQ(layout.output_count(root), e.root_out);
    EXPECT_EQ(layout.input_count(other), e.other_in);
    EXPECT_EQ(layout.output_count(other), e.other_out);
  }
}

TEST(Layout, AlltoallvMatrix) {
  // counts[i*3 + j] = elements rank i sends to rank j.
  const Layout layout(make_spec_v(CollectiveKind::kAlltoallv, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(layout.input_count(0), 6);
  EXPECT_EQ(layout.input_count(2), 24);
  EXPECT_EQ(layout.output_count(0), 1 + 4 + 7);
  EXPECT_EQ(layout.output_count(2), 3 + 6 + 9);
  EXPECT_EQ(layout.pair_count(1, 2), 6);
  EXPECT_EQ(layout.send_displ(1, 2), 4 + 5);
  EXPECT_EQ(layout.recv_displ(2, 1), 3);
}

TEST(Layout, AlltoallvDisplacementsAreSumsOfTheCountsBefore) {
  // Every displacement of a 7 x 7 matrix with zeros and unequal rows against the sums it
  // stands for: what `from` sends to ranks before `to`, what `to` receives from ranks before
  // `from` (from = p: all it receives).
  const Rank p = 7;
  std::vector<Count> counts;
  for (Rank i = 0; i < p * p; ++i) counts.push_back((i * 37 + 11) % 9 == 0 ? 0 : (i * 13) % 17);
  const Layout layout(make_spec_v(CollectiveKind::kAlltoallv, p, counts));
  const auto count = [&](Rank from, Rank to) {
    return counts[static_cast<std::size_t>(from * p + to)];
  };
  for (Rank a = 0; a < p; ++a) {
    Count sent_before = 0;
    Count received_before = 0;
    for (Rank b = 0; b <= p; ++b) {
      EXPECT_EQ(layout.recv_displ(a, b), received_before) << "to " << a << " from " << b;
      if (b < p) {
        EXPECT_EQ(layout.send_displ(a, b), sent_before) << "from " << a << " to " << b;
        EXPECT_EQ(layout.pair_count(a, b), count(a, b));
        sent_before += count(a, b);
        received_before += count(b, a);
      }
    }
    EXPECT_EQ(layout.input_count(a), sent_before);
    EXPECT_EQ(layout.output_count(a), received_before);
  }
}

// An alltoallv spec of one rank's row and column (counts_of) is the matrix with zeros
// elsewhere: every size, displacement and pair of its Layout, and every pair visited, against
// the whole matrix's Layout, for every owner at p = 1, 2, 3 and 7.
TEST(Layout, AlltoallvRowAndColumnIsTheMatrixWithZerosElsewhere) {
  for (const Rank p : {1, 2, 3, 7}) {
    for (Rank owner = 0; owner < p; ++owner) {
      const auto n = static_cast<std::size_t>(p);
      std::vector<Count> matrix(n * n, 0);
      std::vector<Count> row_and_column(2 * n, 0);
      for (Rank i = 0; i < p; ++i) {  // zeros among them
        const auto k = static_cast<std::size_t>(i);
        const Count out = (i * 5 + owner) % 4 == 0 ? 0 : i * 3 + owner + 1;
        const Count in = i == owner ? out : (i * 7 + owner) % 3 == 0 ? 0 : i + 2 * owner + 1;
        matrix[static_cast<std::size_t>(owner) * n + k] = out;
        matrix[k * n + static_cast<std::size_t>(owner)] = in;
        row_and_column[k] = out;
        row_and_column[n + k] = in;
      }
      CollectiveSpec own;
      own.kind = CollectiveKind::kAlltoallv;
      own.nranks = p;
      own.counts = row_and_column;
      own.counts_of = owner;
      const Layout mine(own);  // validates
      const Layout whole(make_spec_v(CollectiveKind::kAlltoallv, p, matrix));
      std::vector<int> visits(n * n, 0);
      for_each_alltoallv_pair(own, [&](Rank from, Rank to, Count m) {
        ++visits[static_cast<std::size_t>(from) * n + static_cast<std::size_t>(to)];
        EXPECT_EQ(m, whole.pair_count(from, to)) << from << " -> " << to;
      });
      for (Rank a = 0; a < p; ++a) {
        EXPECT_EQ(mine.input_count(a), whole.input_count(a)) << "p " << p << " rank " << a;
        EXPECT_EQ(mine.output_count(a), whole.output_count(a)) << "p " << p << " rank " << a;
        for (Rank b = 0; b <= p; ++b) {
          EXPECT_EQ(mine.recv_displ(a, b), whole.recv_displ(a, b)) << "to " << a << " from " << b;
          EXPECT_EQ(mine.send_displ(a, b), whole.send_displ(a, b)) << "from " << a << " to " << b;
          if (b == p) continue;
          EXPECT_EQ(mine.pair_count(a, b), whole.pair_count(a, b));
          EXPECT_EQ(alltoallv_pair(own, a, b), whole.pair_count(a, b));
          const int visited = visits[static_cast<std::size_t>(a) * n + static_cast<std::size_t>(b)];
          EXPECT_EQ(visited, a == owner || b == owner ? 1 : 0) << a << " -> " << b;
        }
      }
    }
  }
}

TEST(CollectiveValidate, NamesEachProblemOfARowAndColumn) {
  CollectiveSpec own;
  own.kind = CollectiveKind::kAlltoallv;
  own.nranks = 3;
  own.counts = {1, 2, 3, 4, 2, 0};  // rank 1 sends 1, 2, 3 and receives 4, 2, 0
  own.counts_of = 1;
  validate(own);
  CollectiveSpec bad = own;
  bad.counts.pop_back();
  expect_invalid(bad, "needs 6 (its row, then its column), got 5");
  bad = own;
  bad.counts_of = 3;
  expect_invalid(bad, "counts_of 3 out of range");
  bad = own;
  bad.counts[4] = 5;
  expect_invalid(bad, "rank 1 sends itself 2 elements in its row but 5 in its column");
  bad = own;
  bad.counts[3] = -1;
  expect_invalid(bad, "counts[3] (rank 1's column, from rank 0) is negative");
  CollectiveSpec gatherv = make_spec_v(CollectiveKind::kGatherv, 3, {1, 2, 3});
  gatherv.counts_of = 0;
  expect_invalid(gatherv, "counts_of (0) is for an alltoallv's row and column only");
  EXPECT_NE(describe(own).find("rank 1's counts: row=[1,2,3] column=[4,2,0]"), std::string::npos)
      << describe(own);
}

// Copies and borrowed layouts share the spec: alltoallv's p^2 counts are not copied again.
TEST(Layout, CopiesAndBorrowedLayoutsShareTheSpec) {
  const CollectiveSpec spec =
      make_spec_v(CollectiveKind::kAlltoallv, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  const Layout borrowed = Layout::borrowing(spec);
  EXPECT_EQ(&borrowed.spec(), &spec);
  const Layout owning(spec);
  EXPECT_NE(&owning.spec(), &spec);
  const Layout copy = owning;  // NOLINT(performance-unnecessary-copy-initialization): the point
  EXPECT_EQ(&copy.spec(), &owning.spec());
  EXPECT_EQ(copy.send_displ(2, 2), 7 + 8);
  EXPECT_EQ(owning.recv_displ(1, 2), 2 + 5);
  EXPECT_THROW(Layout::borrowing(CollectiveSpec{CollectiveKind::kAlltoallv, 2, 0, 0, {1}}), Error);
}

// release_spec moves the counts out of a layout that alone owns them, and copies them where
// another layout shares them or the spec is borrowed (the other holder keeps its spec).
TEST(Layout, ReleaseSpecMovesOnlyWhatItAloneOwns) {
  const std::vector<Count> counts{0, 1, 2, 3};
  Layout alone(make_spec_v(CollectiveKind::kAlltoallv, 2, counts));
  const Count* storage = alone.spec().counts.data();
  const CollectiveSpec moved = std::move(alone).release_spec();
  EXPECT_EQ(moved.counts.data(), storage);
  EXPECT_EQ(moved.counts, counts);

  Layout shared(make_spec_v(CollectiveKind::kAlltoallv, 2, counts));
  const Layout other = shared;
  const CollectiveSpec copied = std::move(shared).release_spec();
  EXPECT_NE(copied.counts.data(), other.spec().counts.data());
  EXPECT_EQ(other.spec().counts, counts);
  EXPECT_EQ(copied.counts, counts);

  const CollectiveSpec spec = make_spec_v(CollectiveKind::kAlltoallv, 2, counts);
  const CollectiveSpec from_borrowed = Layout::borrowing(spec).release_spec();
  EXPECT_EQ(spec.counts, counts);
  EXPECT_EQ(from_borrowed, spec);
}

// alltoallv's displacement tables are made at the first displacement asked, once, whichever
// thread asks: every thread reads the same sums.
TEST(Layout, AlltoallvDisplacementsAskedFromSeveralThreadsAtOnce) {
  const Rank p = 64;
  std::vector<Count> counts;
  for (Rank i = 0; i < p * p; ++i) counts.push_back((i * 7) % 5);
  const Layout layout(make_spec_v(CollectiveKind::kAlltoallv, p, counts));
  std::vector<Count> sums(4, -1);
  {
    std::vector<std::jthread> threads;
    for (std::size_t t = 0; t < sums.size(); ++t) {
      threads.emplace_back(
          [&, t] { sums[t] = layout.send_displ(p - 1, p - 1) + layout.recv_displ(p - 1, p - 1); });
    }
  }
  Count expected = 0;
  for (Rank j = 0; j + 1 < p; ++j) {
    expected += counts[static_cast<std::size_t>((p - 1) * p + j)];  // row p - 1
    expected += counts[static_cast<std::size_t>(j * p + p - 1)];    // column p - 1
  }
  for (const Count s : sums) EXPECT_EQ(s, expected);
}

TEST(Postcondition, GathervAtRootOnly) {
  const Layout layout(make_spec_v(CollectiveKind::kGatherv, 3, {2, 0, 1}, 1));
  const auto at_root = expected_output(layout, 1);
  ASSERT_EQ(at_root.size(), 2u);  // the empty block has no run
  EXPECT_EQ(at_root[0], (ValueRun{0, 2, 0, 0, 0}));
  EXPECT_EQ(at_root[1], (ValueRun{2, 1, 0, 2, 2}));
  EXPECT_TRUE(expected_output(layout, 0).empty());
}

TEST(Postcondition, ReduceScatterAndAlltoall) {
  const Layout rs(make_spec_v(CollectiveKind::kReduceScatter, 3, {2, 3, 1}));
  EXPECT_EQ(expected_output(rs, 1), (std::vector<ValueRun>{{0, 3, 2, 0, 2}}));
  const Layout a2a(make_spec(CollectiveKind::kAlltoall, 3, 2));
  // Rank 1 receives from q the elements q sent to it: q's input [2*1, 2*1+2).
  EXPECT_EQ(expected_output(a2a, 1),
            (std::vector<ValueRun>{{0, 2, 2, 0, 0}, {2, 2, 2, 1, 1}, {4, 2, 2, 2, 2}}));
}

TEST(Postcondition, ScanIsInclusiveExscanExclusive) {
  // A message of n elements: rank r holds element i of x0 ⊕ ... ⊕ xr (scan) or of
  // x0 ⊕ ... ⊕ x(r-1) (exscan, nothing on rank 0); whole messages, so index_base 0.
  const Layout scan(make_spec(CollectiveKind::kScan, 5, 3));
  EXPECT_EQ(scan.total(), 3);
  EXPECT_EQ(scan.displ(4), 0);
  EXPECT_EQ(expected_output(scan, 0), (std::vector<ValueRun>{{0, 3, 0, 0, 0}}));
  EXPECT_EQ(expected_output(scan, 3), (std::vector<ValueRun>{{0, 3, 0, 0, 3}}));
  const Layout exscan(make_spec(CollectiveKind::kExscan, 5, 3));
  EXPECT_TRUE(expected_output(exscan, 0).empty());
  EXPECT_EQ(exscan.output_count(0), 0);
  EXPECT_EQ(expected_output(exscan, 1), (std::vector<ValueRun>{{0, 3, 0, 0, 0}}));
  EXPECT_EQ(expected_output(exscan, 4), (std::vector<ValueRun>{{0, 3, 0, 0, 3}}));
  EXPECT_EQ(initial_contents(exscan, 0, Buf::kInput), (std::vector<ValueRun>{{0, 3, 0, 0, 0}}));
  // Whole messages are not multiplied by p in the size limit (as for allreduce).
  EXPECT_NO_THROW(make_spec(CollectiveKind::kScan, 1024, kMaxCount / 2));
}

TEST(InitialContents, BcastRootHoldsMessageInOutput) {
  const Layout layout(make_spec(CollectiveKind::kBcast, 3, 7, 2));
  EXPECT_TRUE(initial_contents(layout, 2, Buf::kInput).empty());
  EXPECT_EQ(initial_contents(layout, 2, Buf::kOutput), (std::vector<ValueRun>{{0, 7, 0, 2, 2}}));
  EXPECT_TRUE(initial_contents(layout, 0, Buf::kOutput).empty());
  const Layout reduce(make_spec(CollectiveKind::kReduce, 3, 7, 2));
  EXPECT_EQ(initial_contents(reduce, 1, Buf::kInput), (std::vector<ValueRun>{{0, 7, 0, 1, 1}}));
}

TEST(Describe, MentionsCountsCompactly) {
  const auto text =
      describe(make_spec_v(CollectiveKind::kGatherv, 10, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 2));
  EXPECT_NE(text.find("gatherv p=10 root=2"), std::string::npos) << text;
  EXPECT_NE(text.find(",...]"), std::string::npos) << text;
  EXPECT_NE(text.find("total 55"), std::string::npos) << text;
}

}  // namespace
}  // namespace optcoll
