// SPDX-License-Identifier: Apache-2.0
// File: seeded random mutations of registry schedules (docs/design.md, Verifier choices). Every
// mutation kind used here necessarily breaks correctness, so the verifier must reject every
// mutated schedule.
#include <map>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/verify/verify.h"
#include "tests/testing/registry_cases.h"
#include "tests/verify/mutations.h"

namespace optcoll {
namespace {

using testing::OpAt;

enum class Mutation {
  kDropMessage,      // a message's data never arrives
  kShiftRecv,        // a receive lands one element off
  kShiftSend,        // a send reads one element off
  kShiftCopySource,  // a copy reads one element off
  kFlipSide,         // a non-commutative combination in the wrong operand order
  kDuplicateReduce,  // a partial result combined a second time
};

const char* mutation_name(Mutation m) {
  switch (m) {
    case Mutation::kDropMessage:
      return "drop-message";
    case Mutation::kShiftRecv:
      return "shift-recv";
    case Mutation::kShiftSend:
      return "shift-send";
    case Mutation::kShiftCopySource:
      return "shift-copy-source";
    case Mutation::kFlipSide:
      return "flip-side";
    case Mutation::kDuplicateReduce:
      return "duplicate-reduce";
  }
  return "?";
}

// The slice a mutation moves, for the shift kinds.
Slice* moved_slice(Op& op, Mutation m) {
  if (m == Mutation::kShiftRecv) {
    if (auto* a = std::get_if<Recv>(&op.action)) return &a->dst;
    if (auto* a = std::get_if<RecvReduce>(&op.action)) return &a->dst;
  } else if (m == Mutation::kShiftSend) {
    if (auto* a = std::get_if<Send>(&op.action)) return &a->src;
  } else if (m == Mutation::kShiftCopySource) {
    if (auto* a = std::get_if<Copy>(&op.action)) return &a->src;
  }
  return nullptr;
}

bool flippable(const Op& op) {
  return std::holds_alternative<RecvReduce>(op.action) || std::holds_alternative<Reduce>(op.action);
}

// Applies `m` to a random eligible op; false if no op is eligible.
bool mutate(Schedule& s, Mutation m, std::mt19937& rng) {
  std::vector<OpAt> candidates = testing::find_ops(s, [&](Rank, const Op& op) {
    Op copy = op;
    switch (m) {
      case Mutation::kDropMessage:
        return std::holds_alternative<Send>(op.action);
      case Mutation::kFlipSide:
        return flippable(op);
      case Mutation::kDuplicateReduce:
        return std::holds_alternative<RecvReduce>(op.action);
      default:
        return moved_slice(copy, m) != nullptr;
    }
  });
  if (candidates.empty()) return false;
  const OpAt at =
      candidates[std::uniform_int_distribution<std::size_t>(0, candidates.size() - 1)(rng)];
  Op& op = testing::op_at(s, at);
  switch (m) {
    case Mutation::kDropMessage:
      testing::drop_message(s, at);
      return true;
    case Mutation::kFlipSide:
      if (auto* a = std::get_if<RecvReduce>(&op.action)) {
        a->incoming = a->incoming == Side::kLeft ? Side::kRight : Side::kLeft;
      } else {
        auto& r = std::get<Reduce>(op.action);
        r.src_side = r.src_side == Side::kLeft ? Side::kRight : Side::kLeft;
      }
      return true;
    case Mutation::kDuplicateReduce: {
      const RecvReduce recv = std::get<RecvReduce>(op.action);
      const OpAt send_at = testing::partner_of(s, at);
      const Send send = std::get<Send>(testing::op_at(s, send_at).action);
      const std::int32_t seq = testing::unused_seq(s, send_at.rank, at.rank);
      testing::append_after_all(s, send_at.rank, send, seq);
      testing::append_after_all(s, at.rank, recv, seq);
      return true;
    }
    default: {
      Slice* slice = moved_slice(op, m);
      // Prefer a shift that stays in bounds; at offset 0 only +1 is possible.
      const bool up = slice->offset == 0 || std::bernoulli_distribution(0.5)(rng);
      slice->offset += up ? 1 : -1;
      return true;
    }
  }
}

TEST(VerifyRandomMutation, EveryMutationIsRejected) {
  constexpr std::uint32_t kSeed = 20240611;
  constexpr int kMutations = 400;
  std::mt19937 rng(kSeed);
  const auto cases = testing::registry_cases({2, 3, 4, 5, 7, 8});
  const std::vector<Mutation> kinds{Mutation::kDropMessage, Mutation::kShiftRecv,
                                    Mutation::kShiftSend,   Mutation::kShiftCopySource,
                                    Mutation::kFlipSide,    Mutation::kDuplicateReduce};
  int applied = 0;
  int attempts = 0;
  std::map<std::string, int> per_kind;
  while (applied < kMutations && attempts < 50 * kMutations) {
    ++attempts;
    const auto& c = cases[std::uniform_int_distribution<std::size_t>(0, cases.size() - 1)(rng)];
    const Mutation m = kinds[std::uniform_int_distribution<std::size_t>(0, kinds.size() - 1)(rng)];
    // Barrier values are irrelevant (only synchronization is checked), and in a dissemination
    // barrier a signal can be redundant; flipping operands only breaks non-commutative specs;
    // duplicating a combination only breaks reductions.
    if (c.spec.kind == CollectiveKind::kBarrier) continue;
    if (m == Mutation::kFlipSide && c.spec.commutative) continue;
    Schedule s = algorithms::build(*c.algorithm, c.spec);
    if (!mutate(s, m, rng)) continue;
    ++applied;
    ++per_kind[mutation_name(m)];
    const VerifyReport report = verify(s);
    EXPECT_FALSE(report.ok()) << "seed " << kSeed << " mutation #" << applied << " "
                              << mutation_name(m) << " of " << c.name << " was not rejected";
  }
  EXPECT_EQ(applied, kMutations);
  for (const Mutation m : kinds) EXPECT_GT(per_kind[mutation_name(m)], 10) << mutation_name(m);
}

}  // namespace
}  // namespace optcoll
