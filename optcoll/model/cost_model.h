// SPDX-License-Identifier: Apache-2.0
// File: the cost model (docs/design.md, "The cost model"; docs/cost_model.md): one parameter set
// that covers every model of the papers and the node (shared memory), plus the lower bounds that
// hold under it. The scalar settings are declared once, in cost_model_fields.def; model files, the
// CLI's MODEL options, validation and the docs' table are made from that list.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "optcoll/model/collective.h"
#include "optcoll/model/placement.h"
#include "optcoll/model/topology.h"
#include "optcoll/model/types.h"

namespace optcoll {

enum class Duplex : std::uint8_t {
  kHalf,  // at most `ports` communications in total per rank (Träff, Canon)
  kFull,  // `ports` sends and `ports` receives at once (Chan/van de Geijn, Solomonik)
};

// How a send of at least send_mode_min_bytes is done (smaller ones: kPort).
enum class SendMode : std::uint8_t {
  kPort,      // the sender takes part in the whole transfer: it holds a send port
  kShared,    // identical sends in progress share one port (the MPI backend's same-node
              // channel: the data are copied out of the sender once, every receiver copies in)
  kReceiver,  // single copy, receiver-driven (the thread backend): the receiver reads the
              // sender's buffer; the sender holds no port and no processor for it
};

// The words model files and the CLI use for the enum choices, in declaration order.
inline constexpr std::array<std::pair<std::string_view, Duplex>, 2> kDuplexNames{
    {{"half", Duplex::kHalf}, {"full", Duplex::kFull}}};
inline constexpr std::array<std::pair<std::string_view, SendMode>, 3> kSendModeNames{
    {{"port", SendMode::kPort}, {"shared", SendMode::kShared}, {"receiver", SendMode::kReceiver}}};

// How a scalar model field is read and checked (cost_model_fields.def).
enum class ModelFieldKind : std::uint8_t { kTime, kInteger, kBytes, kFlag, kChoice };

// One line of cost_model_fields.def, as data.
struct ModelFieldInfo {
  std::string_view name;  // member, model-file key; the CLI option is --name with '-' for '_'
  ModelFieldKind kind;
  double min = 0;  // kInteger, kBytes: the range (kBytes: max 0 is unbounded)
  double max = 0;
  std::string_view unit;
  std::string_view help;
  bool optional = false;  // unset unless given
};

// Linear costs: a transfer of m units from i to j takes alpha_ij + beta_ij * m and occupies a
// port at both ends; a local copy takes copy * m, a reduction gamma * m. Units are elements,
// or bytes (count * elem_bytes) when `per_byte` is set, as in a calibrated model.
//
// Integer-valued parameters give exact integer times (the papers' tables are integers).
// The simulator's semantics of every field: optcoll/sim/simulator.cc.
struct CostModel {
#define OPTCOLL_MODEL_FIELD(type, name, initial, kind, min, max, unit, help) type name = initial;
#include "optcoll/model/cost_model_fields.def"
#undef OPTCOLL_MODEL_FIELD

  // Optional non-homogeneous network: pair_nranks x pair_nranks matrices, row-major
  // [from][to]. When set they replace alpha and beta for every transfer.
  Rank pair_nranks = 0;
  std::vector<Time> pair_alpha;
  std::vector<Time> pair_beta;

  // Optional network topology (docs/math/torus-bucket.md §1, §6): when set, a transfer also
  // holds every link of its dimension-ordered route for its whole duration, and waits while
  // any of them is held by another transfer (first come, first served by ready time, under
  // the simulator's start-order rule). Ports and duplex still apply per rank; with_topology()
  // sets them as the papers' torus models have them.
  std::optional<Topology> topology;

  // Optional placement (several nodes): a transfer between ranks on different nodes costs
  // inter_alpha + inter_beta * m (each unset: alpha, beta) and holds one of the sending
  // node's nic_ports outgoing channels and one of the receiving node's nic_ports incoming
  // channels for its whole duration (a node's ranks share its NICs); one within a node costs
  // alpha + beta * m and holds no channel. Combined with `cores` (the processors of the whole
  // job, shared by all ranks whatever their node: the emulated cluster's namespaces on one
  // machine), a rank that holds a port for a transfer between nodes is busy as for one within
  // a node, and the NIC channels are held on the stretched clock like ports. Not combined with
  // pair matrices, a topology or node_beta (one node's memory: nodes have their own).
  std::optional<Placement> placement;

  // The send mode that applies to a send of `bytes` (send_mode from send_mode_min_bytes on).
  SendMode send_mode_for(std::size_t bytes) const {
    return bytes >= send_mode_min_bytes ? send_mode : SendMode::kPort;
  }
  // Whether ranks share processors (cores) or memory (node_beta): the simulator's clock then
  // stretches while they are oversubscribed.
  bool stretches_clock() const { return cores.has_value() || node_beta.has_value(); }

  // How long a send of `count` elements holds its sender's port (the transfer time
  // without a gap).
  Time send_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;
  // How long a transfer of `count` elements holds its receiver's port (the transfer time
  // without a receive gap).
  Time receive_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;

  // Every pair of ranks costs alpha + beta * m: no pair matrices and no placement.
  bool homogeneous() const { return pair_nranks == 0 && !placement; }
  bool has_pair_matrices() const { return pair_nranks != 0; }
  // The inter-node costs (alpha, beta where unset).
  Time node_latency() const { return inter_alpha.value_or(alpha); }
  Time node_per_unit() const { return inter_beta.value_or(beta); }
  Time latency(Rank from, Rank to) const;
  Time per_unit(Rank from, Rank to) const;
  // The same for a message of `bytes`: rendezvous_beta for one that waits for the handshake
  // within a node, where the model has it.
  Time per_unit(Rank from, Rank to, std::size_t bytes) const;
  double units(Count count, std::size_t elem_bytes) const;

  // The handshake a message of `bytes` from `from` to `to` waits for: rendezvous_alpha for
  // more than rendezvous_bytes (below rendezvous_max_bytes within a node), else 0.
  Time handshake_time(Rank from, Rank to, std::size_t bytes) const;
  // latency + handshake + per_unit * units. Zero-element transfers cost nothing (Träff: "no
  // communication when no data").
  Time transfer_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;
  // Whether a transfer of `bytes` is helped by its sender when the sender has nothing in
  // progress (helped_bytes; the simulator then halves its per-unit part).
  bool may_be_helped(std::size_t bytes) const { return helped_bytes && bytes >= *helped_bytes; }
  // The least time a transfer of `count` elements may take: its per-unit part at most
  // gamma's into a receive-reduce that combines in place, and halved where it may be
  // helped.
  Time least_transfer_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const;
  Time copy_time(Count count, std::size_t elem_bytes) const;
  Time reduce_time(Count count, std::size_t elem_bytes) const;

  bool operator==(const CostModel&) const = default;
};

// Memory traffic of the node model (node_beta), in copies of the data: a local copy reads and
// writes its data once (1); a reduction reads two operands and writes one (1.5); a transfer
// is one copy when the receiver reads the sender's buffer (SendMode::kReceiver) and two
// otherwise (into a shared buffer, then out of it).
inline constexpr double kCopyTraffic = 1.0;
inline constexpr double kReduceTraffic = 1.5;
inline constexpr double kSingleCopyTransferTraffic = 1.0;
inline constexpr double kStagedTransferTraffic = 2.0;

// The scalar fields, in cost_model_fields.def's order.
std::span<const ModelFieldInfo> model_fields();
// The field called `name`, or nullptr.
const ModelFieldInfo* find_model_field(std::string_view name);
// Sets field `name` from its text as a command line gives it ("2e-6", "16384", "true",
// "half"). Throws Error(kInvalidArgument) naming the field for an unknown name, a value
// that does not read as its kind, or one out of its range.
void set_model_field(CostModel& model, std::string_view name, std::string_view text);
// The fields as a Markdown table (name, kind, unit, range, default, help): docs/cost_model.md
// holds it and a test keeps the two equal.
std::string model_fields_table();

// Throws Error(kInvalidArgument) naming the parameter: NaN, infinite or negative values,
// ports < 1, pair matrices that are not square, a bad placement, a placement with pair
// matrices, a topology or node_beta, cores or node_beta with a topology.
void validate(const CostModel& model);
// As validate(), and the pair matrices (if any) must be nranks x nranks, the placement (if
// any) must place nranks ranks, and inter-node fields (inter_alpha, inter_beta, nic_ports)
// need a placement (a model file may hold them without one for the MPI backend, which gives
// it the placement it discovers: place_on).
void validate_for(const CostModel& model, Rank nranks);

// The model for ranks that run where `discovered` says (a transport's placement, when it
// knows one): a model with a placement must name that one; a model with inter-node costs
// (inter_alpha, inter_beta or nic_ports set) and no placement takes it; any other model is
// returned as it is (it prices every pair alike, and discovering nodes changes nothing).
// Throws Error(kInvalidArgument) naming the first rank where the model's placement differs.
CostModel place_on(CostModel model, const std::optional<Placement>& discovered);

// `model` with `topology` set, and ports, duplex and overlap as in the papers' torus models:
// 2N ports (one per link), half duplex for unidirectional links (2N communications in all),
// full duplex for bidirectional links (2N sends and 2N receives), and overlap of reduction
// with communication (the algorithms pipeline; without overlap a zero-time reduction would
// wait for all of a rank's links to fall idle). Validates the topology.
CostModel with_topology(CostModel model, Topology topology);

// Model files are JSON objects with any of the fields of cost_model_fields.def (by name) and
// the structured ones:
//   {"alpha": 1e-6, "beta": 1e-9, "per_byte": true, "send_mode": "receiver", "cores": 16,
//    "pair_alpha": [[...], ...], "pair_beta": [[...]],
//    "topology": "torus:8x8x8:bi",   (the topology as parse_topology() reads it)
//    "placement": "4x16" or [0, 0, 1, 1, ...]}   (parse_placement(), or a node id per rank)
// Fields not given keep `base`'s values: the unit model (CostModel{}) unless the caller gives
// another (the CLI gives the reference cluster, or the unit model with --abstract: one rule
// for files and options, docs/cost_model.md), or the file names its own with "base":
// "unit", "reference", "threads" (thread_node_model without cores) or "mpi" (mpi_node_model
// without cores, with the default channel threshold of 16 KiB). The old key
// "shared_send_min_bytes": N reads as "send_mode": "shared", "send_mode_min_bytes": N. Provenance
// is checked but not part of the model: "comment" and "source" (text), "calibrated_ranks" (a
// positive integer: the ranks `optcoll calibrate` ran with). Throws Error(kParse) for malformed
// JSON or unknown fields, kInvalidArgument for bad values.
CostModel parse_cost_model_json(std::string_view text, const CostModel& base = CostModel{});
std::string cost_model_to_json(const CostModel& model);

// What a model's numbers are in: "per byte, times in seconds" or "per element, times in
// abstract units".
std::string model_units(const CostModel& model);

// A time for people: with a per-byte model (seconds) "58.0 us", "1.25 ms", "3.2 s"; with an
// abstract model the plain number ("330", "1.5e+06").
std::string format_time(Time t, const CostModel& model);

// The CLI's default when no model is given: an assumed commodity cluster, per byte.
// alpha = 2 us (order of magnitude of MPI small-message latency over InfiniBand or RoCE),
// beta = 0.1 ns/B (10 GB/s per link), gamma = 0.1 ns/B (one streaming pass of a reduction
// over data in cache-missing memory, ~10 GB/s), copy = 0.05 ns/B (memcpy at ~20 GB/s).
// These are assumptions, not measurements: `optcoll calibrate` replaces them.
CostModel reference_cluster_model();

// The thread backend's default when no model is given (a ThreadWorld's Communicator, and
// `optcoll run` and `tune` on threads): one node's shared memory, per byte, with what the
// thread executor does beyond the ops (folds_copies, combines_in_place, helped_bytes = its
// shared copies' threshold, 256 KiB), receiver sends above 4 KiB (the rank that posts second
// copies, and an idle receiver takes a large copy over) and `cores` processors shared by
// the ranks (unset: none counted). The numbers are one measurement, `optcoll calibrate --backend
// threads -p 2` on the project machine (2-core AMD EPYC KVM guest, 2026-11-30), rounded: alpha 0.4
// us, send and receive gaps 0.16 us, beta 0.029 ns/B, gamma 0.04 ns/B, copy 0.021 ns/B, node_beta
// 0.011 ns/B. Another machine's differ (a 16-core Xeon measured alpha 0.6 us and beta 0.09
// ns/B): `optcoll calibrate` replaces them (docs/cost_model.md, "The embedded default").
CostModel thread_node_model(std::optional<int> cores);

// The MPI backend's default for ranks that all run on one node (a Communicator's on MPI,
// the C API's and the PMPI library's without OPTCOLL_MODEL, `optcoll run`, `tune` and
// `bench` under mpirun): one node's shared memory as the MPI backend moves data there, per
// byte. What the backend does beyond the ops: messages above the MPI library's eager limit
// (rendezvous_bytes 4032 B, Open MPI's shared-memory eager size less its header) wait for a
// handshake, those of at least `channel_min_bytes` (the same-node channel's threshold,
// MpiTransport::Options::shm_min_bytes, 16 KiB; nullopt: no channel) go through its arena
// instead, with no handshake, and identical sends in progress share one copy into it
// (send_mode shared from there); a copy that feeds one reduction is folded into it; `cores`
// processors shared by the ranks (unset: none counted). The numbers are medians of three
// calibrations, `optcoll calibrate --backend mpi` under `mpirun -np 2` on the project machine
// (2-core AMD EPYC KVM guest, Open MPI 4.1.4, 2026-11-30), rounded: alpha 0.1 us, send and
// receive gaps 0.06 us, beta 0.025 ns/B, gamma 0.023 ns/B, copy 0.028 ns/B, node_beta 0.012
// ns/B, rendezvous_alpha 2 us; and the library's own messages past the handshake,
// rendezvous_beta 0.067 ns/B (an MPI_Send / MPI_Recv ping-pong: its single copy through the
// kernel, 3.2x the channel's time). `optcoll calibrate` replaces them (docs/cost_model.md, "The MPI
// backend's default").
CostModel mpi_node_model(std::optional<int> cores, std::optional<std::size_t> channel_min_bytes);

// A lower bound on the makespan of any schedule for `layout` under `model`, where one is
// known: homogeneous models only (pair matrices: nullopt). The largest of the known bounds
// that hold under the model (docs/cost_model.md, "Lower bounds"; the arguments at the
// definition), with k ports and R(q) = ceil(log_{k+1} q):
// - latency: R(q)·alpha, q the ranks a value must reach or a rank must hear from (a send
//   gap or shared or receiver sends void the first, a receive gap the second);
// - each rank's data: alpha + beta·m/k for the m elements it must receive, and (not with
//   receiver-driven sends) for the m elements that must leave it (scatter's root:
//   (p-1)/p·n);
// - bcast, and each rank of a reduction: R·alpha + beta·m/k (Chan et al.'s sums; bcast with
//   port sends and no send gap, reductions without a receive gap);
// - reductions: the work (p-1)/p·n·gamma (exscan (p-2)/p), and all ranks' transfers and
//   work together, (p-1)/p·n·(beta/k + gamma) (allreduce 2(p-1)/p·n·beta/k + (p-1)/p·n·gamma),
//   the larger of the two parts instead of their sum under overlap;
// - with a topology the link bound of Jain & Sabharwal (docs/math/torus-bucket.md §2) for
//   reduce-scatter, allgather and allreduce: every element of the result needs p-1
//   (allreduce: 2(p-1)) link crossings, spread over at most L channels (L = pN
//   unidirectional, 2pN bidirectional on a torus; fewer on a mesh);
// - with node_beta, the node's memory: every missing element crosses it once.
// Sound for every model (tests/plan/lower_bound_test.cc checks it against every registry
// algorithm under two dozen models); tight where an algorithm attains it (the same test).
std::optional<Time> lower_bound(const Layout& layout, const CostModel& model);
// The link bound alone (0 when it does not apply: no topology, or another collective).
Time link_lower_bound(const Layout& layout, const CostModel& model);

}  // namespace optcoll
