// SPDX-License-Identifier: Apache-2.0
// File: random allgather schedules built by hand out of several-slice messages (SendSlices /
// RecvSlices), for the verifier, the simulator and every executor backend (threads, fibers,
// the default staging, MPI). Each rank copies its input block into place and sends it to
// every other rank in one message whose form is drawn per pair:
//
//   slices/slices  the sender sends its input as a permutation of pieces (SendSlices); the
//                  receiver splits the message over the places those pieces belong to in its
//                  output block, each cut again at random points (RecvSlices, in message
//                  order, so not in buffer order): the data land where they belong only if
//                  both sides keep the order;
//   send/slices    a plain Send of the whole input; the receiver splits it over the block's
//                  pieces in order (RecvSlices);
//   slices/recv    the sender sends its pieces in order (SendSlices); a plain Recv;
//
// with empty slices mixed into every list. Some pairs also exchange a second, empty message
// (zero total: no slices, or empty ones only) of each form. The result is an ordinary
// allgather, so the expected output is each rank's input in rank order.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/schedule/schedule.h"

namespace optcoll::testing {

struct SlicePatternCase {
  Schedule schedule;
  std::vector<std::vector<std::int64_t>> inputs;    // per rank: `count` elements
  std::vector<std::vector<std::int64_t>> expected;  // per rank: p·count elements
};

namespace slice_patterns_detail {

// [lo, hi) cut at up to `cuts` random points, with an empty slice inserted now and then.
inline std::vector<Slice> cut(std::mt19937_64& rng, Buf buf, Count lo, Count hi, int cuts) {
  std::vector<Count> points{lo, hi};
  for (int i = 0; i < cuts && hi > lo; ++i) {
    points.push_back(lo + static_cast<Count>(rng() % static_cast<std::uint64_t>(hi - lo + 1)));
  }
  std::sort(points.begin(), points.end());
  std::vector<Slice> slices;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    if (rng() % 4 == 0) slices.push_back({buf, points[i], 0});  // empty, anywhere in range
    if (points[i + 1] > points[i] || rng() % 3 == 0) {
      slices.push_back({buf, points[i], points[i + 1] - points[i]});
    }
  }
  return slices;
}

// Up to two empty slices of `buf` within [0, size].
inline std::vector<Slice> empties(std::mt19937_64& rng, Buf buf, Count size) {
  std::vector<Slice> slices(rng() % 3);
  for (Slice& s : slices) {
    s = {buf, static_cast<Count>(rng() % static_cast<std::uint64_t>(size + 1)), 0};
  }
  return slices;
}

inline void add(RankProgram& program, Action action, std::int32_t seq) {
  program.ops.push_back(Op{std::move(action), {}, seq});
}

}  // namespace slice_patterns_detail

// A random case at p ranks of `count` int64 elements each (count may be 0).
inline SlicePatternCase slice_pattern_case(Rank p, Count count, std::uint64_t seed) {
  using namespace slice_patterns_detail;
  std::mt19937_64 rng(seed);
  SlicePatternCase c;
  c.schedule.spec = make_spec(CollectiveKind::kAllgather, p, count);
  c.schedule.spec.elem_bytes = sizeof(std::int64_t);
  c.schedule.algorithm = "test/slice_patterns";
  c.schedule.ranks.resize(static_cast<std::size_t>(p));
  const auto at = [](Rank r) { return static_cast<std::size_t>(r); };
  for (Rank r = 0; r < p; ++r) {
    auto& in = c.inputs.emplace_back();
    for (Count i = 0; i < count; ++i) in.push_back(r * 1000003 + i * 7 + 1);
  }
  for (Rank r = 0; r < p; ++r) {
    auto& out = c.expected.emplace_back();
    for (Rank q = 0; q < p; ++q)
      out.insert(out.end(), c.inputs[at(q)].begin(), c.inputs[at(q)].end());
    add(c.schedule.ranks[at(r)], Copy{{Buf::kInput, 0, count}, {Buf::kOutput, r * count, count}},
        -1);
  }
  for (Rank from = 0; from < p; ++from) {
    for (Rank to = 0; to < p; ++to) {
      if (from == to) continue;
      RankProgram& sender = c.schedule.ranks[at(from)];
      RankProgram& receiver = c.schedule.ranks[at(to)];
      const Count base = from * count;  // the block's place in the receiver's output
      const int form = static_cast<int>(rng() % 3);
      if (form == 0) {
        std::vector<Slice> pieces = cut(rng, Buf::kInput, 0, count, 3);
        std::shuffle(pieces.begin(), pieces.end(), rng);
        std::vector<Slice> places;
        for (const Slice& piece : pieces) {
          for (const Slice& s :
               cut(rng, Buf::kOutput, base + piece.offset, base + piece.end(), 1)) {
            places.push_back(s);
          }
        }
        add(sender, SendSlices{to, pieces}, 0);
        add(receiver, RecvSlices{from, places}, 0);
      } else if (form == 1) {
        add(sender, Send{to, {Buf::kInput, 0, count}}, 0);
        add(receiver, RecvSlices{from, cut(rng, Buf::kOutput, base, base + count, 3)}, 0);
      } else {
        add(sender, SendSlices{to, cut(rng, Buf::kInput, 0, count, 3)}, 0);
        add(receiver, Recv{from, {Buf::kOutput, base, count}}, 0);
      }
      if (rng() % 3 != 0) continue;
      // A second message, of zero elements.
      const Count output = p * count;
      switch (rng() % 3) {
        case 0:
          add(sender, SendSlices{to, empties(rng, Buf::kInput, count)}, 1);
          add(receiver, RecvSlices{from, empties(rng, Buf::kOutput, output)}, 1);
          break;
        case 1:
          add(sender, Send{to, {Buf::kInput, 0, 0}}, 1);
          add(receiver, RecvSlices{from, empties(rng, Buf::kOutput, output)}, 1);
          break;
        default:
          add(sender, SendSlices{to, empties(rng, Buf::kInput, count)}, 1);
          add(receiver, Recv{from, {Buf::kOutput, 0, 0}}, 1);
          break;
      }
    }
  }
  return c;
}

}  // namespace optcoll::testing
