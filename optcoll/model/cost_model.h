// SPDX-License-Identifier: Apache-2.0
// File: the cost model (design.md 3.8): one parameter set that covers every model of the
// papers, plus the lower bounds that hold under it.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/model/topology.h"
#include "optcoll/model/types.h"

namespace optcoll {

enum class Duplex : std::uint8_t {
  kHalf,  // at most `ports` communications in total per rank (Träff, Canon)
  kFull,  // `ports` sends and `ports` receives at once (Chan/van de Geijn, Solomonik)
};

// Linear costs: a transfer of m units from i to j takes alpha_ij + beta_ij * m and occupies a
// port at both ends; a local copy takes copy * m, a reduction gamma * m. Units are elements,
// or bytes (count * elem_bytes) when `per_byte` is set, as in a calibrated model.
//
// Integer-valued parameters give exact integer times (the papers' tables are integers).
struct CostModel {
  Time alpha = 1.0;  // start-up latency per message
  Time beta = 1.0;   // per unit transmitted
  Time gamma = 0.0;  // per unit reduced (Reduce, and the reduction part of RecvReduce)
  Time copy = 0.0;   // per unit copied locally (Träff's local copy cost)
  int ports = 1;     // k: concurrent communications per rank
  Duplex duplex = Duplex::kFull;
  bool overlap = false;   // may Reduce/Copy run while the rank communicates?
  bool per_byte = false;  // units are bytes rather than elements, and times are seconds

  // Optional non-homogeneous network: pair_nranks x pair_nranks matrices, row-major
  // [from][to]. When set they replace alpha and beta for every transfer.
  Rank pair_nranks = 0;
  std::vector<Time> pair_alpha;
  std::vector<Time> pair_beta;

  // Optional network topology (spec torus-bucket.md 2.1, 2.6): when set, a transfer also
  // holds every link of its dimension-ordered route for its whole duration, and waits while
  // any of them is held by another transfer (first come, first served by ready time, under
  // the simulator's start-order rule). Ports and duplex still apply per rank; with_topology()
  // sets them as the papers' torus models have them.
  std::optional<Topology> topology;

  // Optional shared sends (the MPI backend's same-node channel, design.md 30): a send of at
  // least this many bytes whose source slice is that of a send of the same rank still in
  // progress joins it and holds no send port (the data are copied out of the sender once;
  // every receiver still takes its own transfer time and port). Unset: every send holds a
  // port.
  std::optional<std::size_t> shared_send_min_bytes;

  // Optional send gap (LogGP's g): a send holds its sender's port for send_gap + beta * m
  // only (at most its whole transfer time), after which the sender may start its next send
  // or (without overlap) compute while the message is still on its way; the receiver's port
  // is held for the whole transfer, alpha + beta * m, as without a gap. What an MPI
  // library's eager protocol does for small messages: a root posting p - 1 of them pays
  // their latencies once, not p - 1 times. Unset: every send holds its port to the end.
  std::optional<Time> send_gap;
  // Optional receive gap (LogGP's g at the receiving end): a transfer holds its receiver's
  // port for receive_gap + beta * m only (at most its whole transfer time), from the
  // transfer's start, after which the receiver may start taking another message or (without
  // overlap) compute; the received data are still there only at the transfer's end. What
  // eager messages into one rank do: a root taking p - 1 of them pays their latencies once.
  // The hold is placed at the start, not near the arrival: a receiver busy at the start
  // delays the transfer, though the real message could already be on its way. Unset: every
  // transfer holds its receiver's port to the end.
  std::optional<Time> receive_gap;
  // Optional shared processors: every rank runs on one node with this many processors (a
  // single-node model: threads, or MPI ranks on one host). A rank is busy while it holds a
  // port or computes; while more ranks are busy than there are cores, every op in progress
  // advances at cores / busy of its rate (the processors are time-shared evenly), so all of
  // them take longer by busy / cores. A rank that only waits for a message is idle: it
  // blocks or yields. Where ranks do not outnumber the cores nothing changes. Unset: every
  // rank has a processor of its own.
  std::optional<int> cores;
  // How long a send of `count` elements holds its sender's port (the transfer time
  // without a gap).
  Time send_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;
  // How long a transfer of `count` elements holds its receiver's port (the transfer time
  // without a receive gap).
  Time receive_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;

  bool homogeneous() const { return pair_nranks == 0; }
  Time latency(Rank from, Rank to) const;
  Time per_unit(Rank from, Rank to) const;
  double units(Count count, std::size_t elem_bytes) const;

  // Zero-element transfers cost nothing (Träff: "no communication when no data").
  Time transfer_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;
  Time copy_time(Count count, std::size_t elem_bytes) const;
  Time reduce_time(Count count, std::size_t elem_bytes) const;

  bool operator==(const CostModel&) const = default;
};

// Throws Error(kInvalidArgument) naming the parameter: NaN, infinite or negative values,
// ports < 1, pair matrices that are not square.
void validate(const CostModel& model);
// As validate(), and the pair matrices (if any) must be nranks x nranks.
void validate_for(const CostModel& model, Rank nranks);

// `model` with `topology` set, and ports, duplex and overlap as in the papers' torus models:
// 2N ports (one per link), half duplex for unidirectional links (2N communications in all),
// full duplex for bidirectional links (2N sends and 2N receives), and overlap of reduction
// with communication (the algorithms pipeline; without overlap a zero-time reduction would
// wait for all of a rank's links to fall idle). Validates the topology.
CostModel with_topology(CostModel model, Topology topology);

// Model files are JSON objects with the fields above (all optional):
//   {"alpha": 1e-6, "beta": 1e-9, "gamma": 0, "copy": 0, "ports": 1, "duplex": "full",
//    "overlap": false, "per_byte": true, "pair_alpha": [[...], ...], "pair_beta": [[...]],
//    "topology": "torus:8x8x8:bi",   (the topology as parse_topology() reads it)
//    "shared_send_min_bytes": 16384, "send_gap": 2e-7, "receive_gap": 2e-7, "cores": 2}
// and provenance that is checked but not part of the model: "comment" and "source" (text),
// "calibrated_ranks" (a positive integer: the ranks `optcoll calibrate` ran with).
// Throws Error(kParse) for malformed JSON or unknown fields, kInvalidArgument for bad values.
CostModel parse_cost_model_json(std::string_view text);
std::string cost_model_to_json(const CostModel& model);

// A time for people: with a per-byte model (seconds) "58.0 us", "1.25 ms", "3.2 s"; with an
// abstract model the plain number ("330", "1.5e+06").
std::string format_time(Time t, const CostModel& model);

// The CLI's default when no model is given: an assumed commodity cluster, per byte.
// alpha = 2 us (order of magnitude of MPI small-message latency over InfiniBand or RoCE),
// beta = 0.1 ns/B (10 GB/s per link), gamma = 0.1 ns/B (one streaming pass of a reduction
// over data in cache-missing memory, ~10 GB/s), copy = 0.05 ns/B (memcpy at ~20 GB/s).
// These are assumptions, not measurements: `optcoll calibrate` replaces them.
CostModel reference_cluster_model();

// A lower bound on the makespan of any schedule for `layout` under `model`, where one is
// known: homogeneous models only. It is the larger of a latency bound (data from one rank
// can reach at most (k+1)^t ranks after t message latencies, and a rank can hold the data
// of at most (k+1)^t ranks; a send gap or shared sends void the first, a receive gap the
// second) and a bandwidth bound (the
// busiest receiver must take in its missing elements through k ports). Sound, not tight.
// With a topology, also the link bound of Jain & Sabharwal (spec torus-bucket.md 2.2) for
// reduce-scatter, allgather and allreduce: every element of the result needs p-1 (allreduce:
// 2(p-1)) link crossings, spread over at most L channels (L = pN unidirectional, 2pN
// bidirectional on a torus; fewer on a mesh): (p-1)/p·n·β·p/L (×2 for allreduce) for a
// vector of n elements; and the reduction work (p-1)/p·n·γ (exscan: (p-2)/p·n·γ) for the
// reductions other than reduce.
std::optional<Time> lower_bound(const Layout& layout, const CostModel& model);
// The link bound alone (0 when it does not apply: no topology, or another collective).
Time link_lower_bound(const Layout& layout, const CostModel& model);

}  // namespace optcoll
