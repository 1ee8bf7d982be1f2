// SPDX-License-Identifier: Apache-2.0
// alltoall(v)/node_aware — the blocks of a node cross the network together: every node
// gathers its ranks' send buffers at its leader (its first rank), the leader regroups them by
// destination node, the leaders exchange one message per pair of nodes (an alltoallv of the
// nodes' combined blocks), each leader regroups what it received by destination rank, and
// scatters it within its node.
//
//   2 nodes x 2 ranks {0,1} {2,3}: intra gatherv 1 -> 0, 3 -> 2; leader 0 packs
//     [x01 x11 ... for node 0 | x02 x03 x12 x13 for node 1]; inter alltoallv 0 <-> 2 (one
//     message of 4 blocks each way); leader 0 unpacks [x00 x10 x20 x30 | x01 x11 x21 x31];
//     intra scatterv 0 -> 1, 2 -> 3
//
// Cost: max T_gatherv(m_node, the members' send totals) + T_alltoallv(N, node-pair totals)
//   + max T_scatterv(m_node, the members' receive totals) + the leader's two regroupings
//   (copy per element of what it sends and receives); N(N-1) messages cross the network
//   instead of the flat algorithms' p(p-1) - Σ m_node(m_node-1), at the price of every byte
//   passing through its nodes' leaders.
// Restrictions: nodes auto or 1..p; up (gatherv), inter (alltoallv) and down (scatterv) auto
//   or flat registry algorithms of those kinds.
// Reference: Träff & Rougier, "MPI collectives and datatypes for hierarchical all-to-all
//   communication" (EuroMPI 2014); Open MPI coll/han's and MPICH's node-aware alltoall
//   designs aggregate the same way.

#include <numeric>

#include "optcoll/algorithms/node_aware/common.h"

namespace optcoll::algorithms {
namespace {

constexpr ParamInfo kParams[] = {
    {"nodes", "auto", "auto (the model's placement) or N nodes in even blocks"},
    {"up", "auto", "gatherv of the send buffers within each node to its leader"},
    {"inter", "auto", "alltoallv of the nodes' combined blocks among the leaders"},
    {"down", "auto", "scatterv of the received blocks within each node"},
};
constexpr patterns::LevelPhase kPhases[] = {
    {"up", CollectiveKind::kGatherv},
    {"inter", CollectiveKind::kAlltoallv, patterns::Level::kInter, "pairwise"},
    {"down", CollectiveKind::kScatterv}};
enum Phase : std::size_t { kUp, kInter, kDown };

// Where every block sits at its leader: in the gathered send buffers (by member, then
// destination rank), in the packed send buffer of the leaders' exchange (by destination node,
// member, destination member), in the received buffer (by source node, source member,
// destination member) and in the unpacked buffer the leader scatters (by destination member,
// then source rank).
struct Regrouping {
  std::vector<Count> node_pair;     // N x N: elements node A's members send to node B's
  std::vector<Count> gathered;      // per node: its members' send totals together
  std::vector<Count> gather_displ;  // per rank: where its send buffer sits in its leader's
  std::vector<Count> unpacked;      // per node: its members' receive totals together
};

struct Plan {
  patterns::PhasePlan phases;
  Regrouping at;
};

Regrouping regrouping(const patterns::NodeLevels& levels, const std::vector<std::int32_t>& node_of,
                      const Layout& layout) {
  const auto nodes = static_cast<std::size_t>(levels.nodes());
  Regrouping at;
  at.node_pair.assign(nodes * nodes, 0);
  at.gathered.assign(nodes, 0);
  at.unpacked.assign(nodes, 0);
  at.gather_displ.assign(static_cast<std::size_t>(layout.nranks()), 0);
  for (Rank from = 0; from < layout.nranks(); ++from) {
    const auto a = static_cast<std::size_t>(node_of[static_cast<std::size_t>(from)]);
    at.gather_displ[static_cast<std::size_t>(from)] = at.gathered[a];
    at.gathered[a] += layout.input_count(from);
    at.unpacked[a] += layout.output_count(from);
    for (Rank to = 0; to < layout.nranks(); ++to) {
      at.node_pair[a * nodes + static_cast<std::size_t>(node_of[static_cast<std::size_t>(to)])] +=
          layout.pair_count(from, to);
    }
  }
  return at;
}

Plan plan_of(const CollectiveSpec& spec, const Params& params, const CostModel& model) {
  const Layout layout = Layout::borrowing(spec);
  Plan plan{{patterns::node_levels(spec.nranks, params, model), kPhases}, {}};
  const auto& levels = plan.phases.levels();
  std::vector<std::int32_t> node_of(static_cast<std::size_t>(spec.nranks), 0);
  for (std::size_t g = 0; g < levels.members.size(); ++g) {
    for (const Rank r : levels.members[g]) {
      node_of[static_cast<std::size_t>(r)] = static_cast<std::int32_t>(g);
    }
  }
  plan.at = regrouping(levels, node_of, layout);
  for (std::size_t g = 0; g < levels.members.size(); ++g) {
    std::vector<Count> sends;
    std::vector<Count> receives;
    for (const Rank r : levels.members[g]) {
      sends.push_back(layout.input_count(r));
      receives.push_back(layout.output_count(r));
    }
    const Rank size = levels.size(static_cast<std::int32_t>(g));
    plan.phases.specs(kUp).push_back(patterns::level_spec(
        spec, CollectiveKind::kGatherv, size, 0, levels.leader_index[g], std::move(sends)));
    plan.phases.specs(kDown).push_back(patterns::level_spec(
        spec, CollectiveKind::kScatterv, size, 0, levels.leader_index[g], std::move(receives)));
  }
  plan.phases.specs(kInter).push_back(patterns::level_spec(
      spec, CollectiveKind::kAlltoallv, levels.nodes(), 0, 0, plan.at.node_pair));
  plan.phases.choose(params);
  return plan;
}

// Copies of blocks from one scratch area to another on one rank, each run merged with the
// one before it where both continue where it ended (a node's ranks in a block of
// consecutive ranks regroup in one copy per member and node).
class CopyRuns {
 public:
  void add(Count src, Count dst, Count count) {
    if (count == 0) return;
    if (!runs_.empty()) {
      Run& last = runs_.back();
      if (last.src + last.count == src && last.dst + last.count == dst) {
        last.count += count;
        return;
      }
    }
    runs_.push_back({src, dst, count});
  }
  void emit(Stitcher& stitcher, Rank r, const Slice& from, const Slice& to) const {
    for (const Run& run : runs_) {
      stitcher.copy(r, Slice{from.buf, from.offset + run.src, run.count},
                    Slice{to.buf, to.offset + run.dst, run.count});
    }
  }

 private:
  struct Run {
    Count src;
    Count dst;
    Count count;
  };
  std::vector<Run> runs_;
};

// Leader of node g: its gathered send buffers (by member, destination rank) into the
// exchange's send order (by destination node, member, destination member).
CopyRuns pack_by_node(const Plan& plan, const Layout& layout, std::size_t g) {
  CopyRuns runs;
  Count dst = 0;
  for (const auto& destinations : plan.phases.levels().members) {
    for (const Rank from : plan.phases.levels().members[g]) {
      const Count base = plan.at.gather_displ[static_cast<std::size_t>(from)];
      for (const Rank to : destinations) {
        const Count m = layout.pair_count(from, to);
        runs.add(base + layout.send_displ(from, to), dst, m);
        dst += m;
      }
    }
  }
  return runs;
}

// Leader of node g: what the exchange delivered (by source node, source member, destination
// member) into the scatter's order (by destination member, then source rank).
CopyRuns unpack_by_rank(const Plan& plan, const Layout& layout, std::size_t g) {
  const auto& mine = plan.phases.levels().members[g];
  // Where each source rank's blocks for this node start in the received buffer.
  std::vector<Count> received_at(static_cast<std::size_t>(layout.nranks()), 0);
  Count at = 0;
  for (const auto& sources : plan.phases.levels().members) {
    for (const Rank from : sources) {
      received_at[static_cast<std::size_t>(from)] = at;
      for (const Rank to : mine) at += layout.pair_count(from, to);
    }
  }
  CopyRuns runs;
  Count dst = 0;
  for (const Rank to : mine) {
    for (Rank from = 0; from < layout.nranks(); ++from) {
      // received_at[from] moves past `from`'s block for each member in turn.
      Count& src = received_at[static_cast<std::size_t>(from)];
      const Count m = layout.pair_count(from, to);
      runs.add(src, dst, m);
      src += m;
      dst += m;
    }
  }
  return runs;
}

}  // namespace

std::span<const ParamInfo> alltoall_node_aware_params() { return kParams; }

std::optional<std::string> alltoall_node_aware_why_not(const CollectiveSpec& spec,
                                                       const Params& params) {
  return patterns::levels_why_not(spec, params, kPhases);
}

Schedule build_alltoall_node_aware(const CollectiveSpec& spec, const Params& params,
                                   const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  const Layout layout = Layout::borrowing(spec);
  const auto& levels = plan.phases.levels();
  const auto nodes = static_cast<std::size_t>(levels.nodes());
  Stitcher stitcher(spec, std::string(collective_name(spec.kind)) + "/node_aware");
  // Per leader: gathered, packed, received and unpacked areas.
  std::vector<Slice> gathered, packed, received, unpacked;
  for (std::size_t g = 0; g < nodes; ++g) {
    Count sends = 0;
    Count receives = 0;
    for (std::size_t b = 0; b < nodes; ++b) {
      sends += plan.at.node_pair[g * nodes + b];
      receives += plan.at.node_pair[b * nodes + g];
    }
    const Rank leader = levels.leaders[g];
    gathered.push_back(stitcher.scratch(leader, plan.at.gathered[g]));
    packed.push_back(stitcher.scratch(leader, sends));
    received.push_back(stitcher.scratch(leader, receives));
    unpacked.push_back(stitcher.scratch(leader, plan.at.unpacked[g]));
  }
  const auto member = [&](std::size_t g, Rank i) {
    return levels.members[g][static_cast<std::size_t>(i)];
  };
  node_aware::append_phase(stitcher, plan.phases, kUp, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kInput) return node_aware::whole(layout, member(g, i), buf);
    return i == levels.leader_index[g] ? gathered[g] : Slice{Buf::kOutput, 0, 0};
  });
  for (std::size_t g = 0; g < nodes; ++g) {
    pack_by_node(plan, layout, g).emit(stitcher, levels.leaders[g], gathered[g], packed[g]);
  }
  node_aware::append_phase(stitcher, plan.phases, kInter, [&](std::size_t, Rank i, Buf buf) {
    const auto g = static_cast<std::size_t>(i);
    return buf == Buf::kInput ? packed[g] : received[g];
  });
  for (std::size_t g = 0; g < nodes; ++g) {
    unpack_by_rank(plan, layout, g).emit(stitcher, levels.leaders[g], received[g], unpacked[g]);
  }
  node_aware::append_phase(stitcher, plan.phases, kDown, [&](std::size_t g, Rank i, Buf buf) {
    if (buf == Buf::kOutput) return node_aware::whole(layout, member(g, i), buf);
    return i == levels.leader_index[g] ? unpacked[g] : Slice{Buf::kInput, 0, 0};
  });
  stitcher.set_params(plan.phases.recorded());
  return std::move(stitcher).finish();
}

// Estimate: the three phases' estimates one after the other, plus the busiest leader's two
// regroupings (a copy of everything it sends and of everything it receives).
std::optional<Estimate> estimate_alltoall_node_aware(const CollectiveSpec& spec,
                                                     const Params& params, const CostModel& model) {
  const Plan plan = plan_of(spec, params, model);
  auto estimate = plan.phases.estimate();
  const auto costs = closed_form_costs(spec, plan.phases.levels().intra);
  if (!estimate || !costs) return std::nullopt;
  const auto nodes = static_cast<std::size_t>(plan.phases.levels().nodes());
  Time regroup = 0;
  for (std::size_t g = 0; g < nodes; ++g) {
    Count moved = 0;
    for (std::size_t b = 0; b < nodes; ++b) {
      moved += plan.at.node_pair[g * nodes + b] + plan.at.node_pair[b * nodes + g];
    }
    regroup = std::max(regroup, costs->copy_of(moved));
  }
  estimate->time += regroup;
  // The regroupings' copies: at most one per block each, p^2 blocks (16.7 M ops at p =
  // 4,096: most of the schedule, which the phases' work does not count).
  const auto p = static_cast<double>(spec.nranks);
  estimate->work += 2 * p * p;
  return estimate;
}

}  // namespace optcoll::algorithms
