// SPDX-License-Identifier: Apache-2.0
// File: calibration at the size that will run (`optcoll calibrate`): every measurement is made
// in a world of all p ranks, so the model knows a node under load, not two idle ranks.
//
//   beta        ping-pong between ranks 0 and 1 (the others idle), the slope over the large
//               messages (FitKind): one transfer's own bandwidth;
//   alpha       the step of a ring exchange with every rank busy (each sends to the next and
//               receives from the previous at once, steps back to back) at the smallest size,
//               less beta·m: the cost of a step under load (synchronization at p ranks, which
//               an idle ping-pong does not see);
//   copy        memcpy of a large buffer by one rank while the others wait;
//   gamma       the --dtype/--op reduction kernel likewise;
//   node_beta   k = 1..p ranks copying at once: the node's memory throughput, fitted as
//               min(k / copy, 1 / node_beta) (docs/cost_model.md, "One node");
//   send_gap    with at least 4 ranks: an exchange of 8 B between every pair at once (each
//               rank sends p - 1 and receives p - 1 messages; steps back to back): the gap
//               at which the model predicts it as measured (about alpha + (p - 2)·g), the
//               cost of one more message at a port while every rank is busy; never below
//               the burst of small sends against a single one between two ranks
//               (measure_send_gap), which alone fits it below 4 ranks. Also written as
//               receive_gap;
//   send_mode   bcast/linear of the largest size with all ranks, predicted under each send
//               mode the backend may have: the mode that predicts it best;
//   cores       given by the caller (the processors the ranks share), not measured;
//   nic_ports   not on one node (calibrate_levels measures it over several): `unmeasured`
//               says so, and the model keeps 1.
// Each fitted parameter comes with its fit error: the largest |fit / measured - 1| over what
// it was fitted to (for a direct measurement: the spread of its repetitions, (max - min) /
// median). Checks compare the fitted model's predictions with measurements it was not
// fitted to: the ring exchange at every size, concurrent reductions at p ranks, the fan-out.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "optcoll/exec/calibrate.h"
#include "optcoll/exec/transport.h"
#include "optcoll/model/cost_model.h"

namespace optcoll {

struct NodeCalibrationOptions {
  std::size_t max_bytes = std::size_t{4} << 20;  // the ping-pong's and exchange's largest size
  int repetitions = 20;
  int burst = 16;
  // Per rank: the buffer of the copy and reduction timings. The largest message's size by
  // default, so that copy, gamma and node_beta describe the same working set as beta (one
  // number per rate cannot describe every level of the caches).
  std::size_t stream_bytes = std::size_t{4} << 20;
  std::string dtype = "double";
  std::string op = "sum";
  FitKind fit = FitKind::kAsymptotic;
  std::chrono::milliseconds timeout{30000};
  std::optional<int> cores;  // the processors the ranks share (over several nodes: the job's)
  // The send modes the backend may have, tried against the fan-out measurement, and the size
  // they apply from (smaller sends are port sends).
  std::vector<SendMode> send_modes{SendMode::kPort};
  std::size_t send_mode_min_bytes = 0;
  // Whether to look for the message protocol's handshake (the MPI backend on one node: the
  // library's rendezvous above its eager limit): the exchange step at doubling sizes from
  // kHandshakeSearchFrom below own_protocol_from (and up to max_bytes), its largest jump
  // (find_protocol_jump) narrowed down by bisection to rendezvous_bytes and
  // rendezvous_alpha.
  bool find_handshake = false;
  // Messages of at least this many bytes go by the backend's own protocol (the MPI
  // backend's same-node channel): the search stops below it, and the model's
  // rendezvous_max_bytes says so.
  std::optional<std::size_t> own_protocol_from;
  // Transfers of at least this many bytes are helped by their sender when it waits (the
  // thread backend's shared copies, when its ranks spin: ThreadTransport::kShareBytes): the
  // model's helped_bytes. Unset: none is. The ping-pong's beta is fitted as it is: there
  // both ranks share every large copy, yet one way takes what one rank's copy takes (on the
  // project machine 512 KiB took 14.9 us helped, 4 x 3.6 us for 128 KiB unhelped), while a
  // helped bcast or receive-reduce takes half (bcast/linear of 512 KiB: 6.9 us): its slope
  // is the unhelped rate.
  std::optional<std::size_t> helped_bytes;
  // The backend's receive-reduce combines straight from the sender's buffer (the thread
  // backend): the model's combines_in_place.
  bool combines_in_place = false;
};
inline constexpr std::size_t kHandshakeSearchFrom = 64;

// The exchange step just below and just above the handshake: the largest eager size
// measured and the smallest one that waited.
struct HandshakeJump {
  PingPongSample eager;
  PingPongSample waited;
};

// The jump of a protocol switch in `steps` (one exchange step per size, each size twice the
// one before): the index i past which every step took more than twice the longest up to i,
// by the largest margin. A linear cost a + b*m at most doubles when m does, so only a new
// cost can; the least after and the most before make one noisy sample no jump. nullopt if
// no i qualifies (every size one protocol, or a switch cheaper than the sizes' noise).
std::optional<std::size_t> find_protocol_jump(std::span<const PingPongSample> steps);

struct FittedParameter {
  std::string name;  // the model field
  double value = 0;
  std::string from;  // what was measured to fit it
  double error = 0;  // its fit error (see the file comment)
};

// A model field calibration could not measure here, the value the model keeps and why (the
// CLI prints it beside the fitted ones: nothing is left at a default silently).
struct UnmeasuredParameter {
  std::string name;  // the model field
  double value = 0;  // the value the model keeps
  std::string why;   // why it was not measured
};

struct ModelCheck {
  std::string what;
  double measured = 0;   // seconds
  double predicted = 0;  // seconds, under the fitted model
};

struct NodeCalibration {
  CostModel model;
  Rank ranks = 0;
  std::vector<FittedParameter> fitted;
  std::vector<UnmeasuredParameter> unmeasured;
  std::vector<ModelCheck> checks;
  std::vector<PingPongSample> ping_pong;  // one way, ranks 0 and 1
  std::vector<PingPongSample> exchange;   // one step of the ring exchange, slowest rank
  std::vector<double> copy_throughput;    // [k - 1]: bytes per second of k ranks copying at once
  std::vector<KernelRate> kernels;        // every built-in kernel on one rank
  std::optional<SendGapSample> send_gap;
  std::optional<double> all_pairs;  // an exchange of 8 B between every pair (p >= 4), seconds
  std::vector<double> nic_streams;  // [k - 1]: seconds of k streams between two nodes at once
  // find_handshake: the exchange steps it measured (doubling sizes, then the bisection's),
  // and the jump it found.
  std::vector<PingPongSample> handshake_steps;
  std::optional<HandshakeJump> handshake;
  double seconds = 0;  // the whole calibration
};

// Collective: every rank of `transport` (at least 2) calls it with the same options. The
// result is complete on rank 0 (other ranks get their own measurements only). Throws
// Error(kInvalidArgument) for bad options or an unknown --dtype/--op (before measuring),
// TransportError when a rank fails or stalls.
NodeCalibration calibrate_node(Transport& transport, const NodeCalibrationOptions& options);

// The two levels of a call over several nodes (`placement`, as the transport discovered it;
// collective, after calibrate_node): a ping-pong between two ranks of one node gives alpha
// and beta (the first node with two ranks; none: they stay as calibrate_node measured them),
// one between the leaders of the first two nodes gives inter_alpha and inter_beta (each fit
// as beta's, FitKind; alpha is the fitted line at the smallest size), and the model takes the
// placement. nic_ports: on the first two nodes with at least two ranks each, k = 1..K
// concurrent streams of the largest size (K = the smaller node's ranks, at most
// kMaxNicStreams), the first k ranks of one node each sending to one of the first k of the
// other, all at once, in rounds of calls timed from a barrier to a barrier (fit_nic_ports;
// the times in nic_streams); without two such nodes it stays 1 and `unmeasured` says why.
// node_beta is dropped (a model with a placement describes each node's memory by alpha and
// beta), and cores too unless the ranks outnumber them (the options' cores: the processors
// of the whole job; docs/cost_model.md). Fitted on rank 0 into `calibration` (its fitted
// list says so); a placement of one node changes nothing. Error(kInvalidArgument) for a
// placement that does not describe the transport's ranks.
inline constexpr int kMaxNicStreams = 8;
void calibrate_levels(Transport& transport, const Placement& placement,
                      const NodeCalibrationOptions& options, NodeCalibration& calibration);

// node_beta fitted to a copy-throughput curve (`throughput[k - 1]`: bytes per second of k
// ranks copying at once; `copy`: one rank's seconds per byte): the model's curve is
// min(k / copy, 1 / node_beta); the saturation level (one of the measured ones, but never
// below one rank's copy rate) that fits the curve best in least squares of log(model /
// measured): one stray point (a rank descheduled during its copy) cannot drag it down, as it
// did when the level with the least largest error was chosen (13 GB/s for a node that
// copied 86 GB/s). Its error is the largest relative error over k.
FittedParameter fit_node_beta(const std::vector<double>& throughput, double copy);

// nic_ports fitted to the times of k = 1..K concurrent streams between two nodes
// (`times[k - 1]`, seconds, each stream from its own sender to its own receiver). Under the
// model a node with P NIC ports moves k such messages in ceil(k / P) transfer times; a link
// that shares its bandwidth fairly among the streams takes max(1, k / P) instead. Both move
// at most P streams' worth at once: P is the largest aggregate throughput seen, max over k of
// k * times[0] / times[k - 1] (in units of one stream), rounded to the nearest integer, and
// 1..K (K streams that never slow down: at least K, reported as K). The largest |time
// predicted (ceil(k / P) * times[0]) / measured - 1| over k is its error. `from` describes
// the curve (each time in units of the single stream's). Error(kInvalidArgument) for no times
// or a time that is not positive and finite.
FittedParameter fit_nic_ports(const std::vector<double>& times);

// Checks options as calibrate_node does, without a transport (the CLI, before it starts).
void check_calibration_options(const NodeCalibrationOptions& options);

}  // namespace optcoll
