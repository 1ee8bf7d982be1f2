// SPDX-License-Identifier: Apache-2.0
// File: MPICH's collective selection file (rules_export.h, to_mpich_json), the CSEL JSON
// that MPICH 4.0 reads from MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE.
//
// The file is a tree of objects; in each object MPICH takes the first key (in file order)
// whose condition holds, down to a leaf "algorithm=NAME": {}. What MPICH 4.0.2 was found to
// require (docs/export.md has the details and how they were established):
//   - the file replaces MPICH's own for every collective: every collective MPICH selects
//     for gets a subtree (library_algorithms.h, mpich_collectives()), else a call of it
//     aborts;
//   - a size condition ("comm_size<=N", "avg_msg_size<=N", "comm_size=pow2") needs a later
//     sibling, and the catch-all ("...=any") must come last; N is read into an int;
//   - an algorithm named in the file runs without MPICH's applicability checks, so every
//     choice is guarded by its restrictions here (power-of-two p, a predefined operator with
//     at least pof2(p) elements, a commutative operator, not in place), with the
//     collective's always-applicable algorithm on the other branch.
// Communicator sizes: the rules of p hold from p up to the next p asked for (the smallest
// p's also below it), as in Open MPI's file.
#include <climits>
#include <map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/plan/rules_export.h"

namespace optcoll {
namespace {

using Tree = nlohmann::ordered_json;

Tree leaf(std::string_view algorithm) {
  Tree t = Tree::object();
  t[fmt::format("algorithm={}", algorithm)] = Tree::object();
  return t;
}

// {first_key: first, second_key: second}: MPICH takes the first whose condition holds.
Tree either(std::string_view first_key, Tree first, std::string_view second_key, Tree second) {
  Tree t = Tree::object();
  t[std::string(first_key)] = std::move(first);
  t[std::string(second_key)] = std::move(second);
  return t;
}

// `algorithm` behind the conditions its restrictions need; `fallback` elsewhere.
Tree guarded(const LibraryAlgorithm& algorithm, std::string_view fallback) {
  Tree t = leaf(algorithm.name);
  if (algorithm.restrictions & kCommutativeOp) {
    t = either("is_commutative=yes", t, "is_commutative=no", leaf(fallback));
  }
  if (algorithm.restrictions & kBuiltInOp) {
    t = either("is_op_built_in=yes", either("count<pow2", leaf(fallback), "count=any", t),
               "is_op_built_in=no", leaf(fallback));
  }
  if (algorithm.restrictions & kPowerOfTwoRanks) {
    t = either("comm_size=pow2", t, "comm_size=any", leaf(fallback));
  }
  return t;
}

// In-place calls of the alltoalls to their in-place algorithm, the others to `t`.
Tree with_in_place(const MpichCollective& c, Tree t) {
  if (c.intra_in_place.empty()) return t;
  return either("is_sendbuf_inplace=yes", leaf(c.intra_in_place), "is_sendbuf_inplace=no",
                std::move(t));
}

// The rules of one collective at one p as a tree over the message-size key.
Tree size_tree(const std::vector<const LibraryRule*>& rules, const MpichCollective& c) {
  const auto key = mpich_message_key_name(rules.front()->kind);
  if (key.empty() || rules.size() == 1) return guarded(*rules.front()->algorithm, c.intra);
  Tree t = Tree::object();
  for (std::size_t i = 0; i + 1 < rules.size(); ++i) {
    t[fmt::format("{}<={}", key, rules[i + 1]->from_key - 1)] =
        guarded(*rules[i]->algorithm, c.intra);
  }
  t[fmt::format("{}=any", key)] = guarded(*rules.back()->algorithm, c.intra);
  return t;
}

// Every p's rules of one collective, by communicator size.
Tree tuned_tree(const std::map<Rank, std::vector<const LibraryRule*>>& by_p,
                const MpichCollective& c) {
  Tree t = Tree::object();
  if (by_p.size() == 1) {
    t = size_tree(by_p.begin()->second, c);
  } else {
    for (auto it = by_p.begin(); it != by_p.end(); ++it) {
      const auto next = std::next(it);
      const std::string key = next == by_p.end() ? std::string("comm_size=any")
                                                 : fmt::format("comm_size<={}", next->first - 1);
      t[key] = size_tree(it->second, c);
    }
  }
  return with_in_place(c, std::move(t));
}

}  // namespace

// `source` is not written: JSON has no comments, and MPICH refuses every key it does not
// know (the command prints where the choices came from).
std::string to_mpich_json(const LibraryRules& rules, std::string_view /*source*/) {
  std::map<CollectiveKind, std::map<Rank, std::vector<const LibraryRule*>>> grouped;
  for (const auto& r : rules.rules) {
    // MPICH reads the keys as int: a rule starting beyond INT_MAX cannot be written (the
    // previous rule then holds up there).
    if (r.from_key > static_cast<std::uint64_t>(INT_MAX)) continue;
    grouped[r.kind][r.nranks].push_back(&r);
  }
  Tree file = Tree::object();
  for (const auto& c : mpich_collectives()) {
    const std::string name = fmt::format("collective={}", c.name);
    if (c.all_communicators) {
      file[name] = leaf(c.intra);
      continue;
    }
    const auto tuned = c.kind ? grouped.find(*c.kind) : grouped.end();
    Tree entry = Tree::object();
    entry["comm_type=intra"] =
        tuned != grouped.end() ? tuned_tree(tuned->second, c) : with_in_place(c, leaf(c.intra));
    if (!c.inter.empty()) entry["comm_type=inter"] = leaf(c.inter);
    file[name] = entry;
  }
  return file.dump(1) + "\n";
}

}  // namespace optcoll
