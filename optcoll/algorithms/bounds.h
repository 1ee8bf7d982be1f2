// SPDX-License-Identifier: Apache-2.0
// File: lower bounds on an algorithm's simulated time that need no schedule: the registry's
// `bound` hooks (algorithms.def), which let `auto` skip building the candidates that cannot
// win (optcoll/plan/select.h). At p = 1024 a ring's schedule has millions of ops and takes
// seconds to build and simulate; its bound takes microseconds.
//
// Two facts of the simulator's semantics (optcoll/sim/simulator.cc) carry every bound:
// - a message of c >= 1 elements takes at least least_transfer_time(c) from the start of its
//   Send to the end of its Recv (zero-element messages are free);
// - a rank has at most `ports` transfers in progress in each direction (full duplex), or in
//   all (half duplex); with shared or receiver sends (CostModel::send_mode) this holds for
//   receives only, which is all the fan-in bounds use.
// So a piece forwarded along h ranks in turn (each Send after the Recv that brought it) takes
// at least h transfer times (a chain), and a rank that receives m messages takes at least
// ceil(m / ports) of them (a fan-in): with a receive gap (CostModel::receive_gap) each but
// the last of those holds the port only for its receive port time, from its start. Each
// algorithm's bound names its chain or fan-in;
// tests/plan/bounds_test.cc checks every bound against the simulator over rank counts,
// counts and models.
#pragma once

#include "optcoll/model/collective.h"
#include "optcoll/model/cost_model.h"

namespace optcoll::algorithms {

// The least time a message of `count` >= 1 elements of spec's type can take between any two
// of spec's ranks under `model`; 0 for count 0.
Time least_transfer_time(const CollectiveSpec& spec, const CostModel& model, Count count);

// `hops` messages of `count` elements, each sent after the previous one was received.
Time chain_bound(const CollectiveSpec& spec, const CostModel& model, Count hops, Count count);

// The least time a message of `count` >= 1 elements holds its receiver's port (the transfer
// time, less with a receive gap: CostModel::receive_port_time); 0 for count 0.
Time least_receive_port_time(const CollectiveSpec& spec, const CostModel& model, Count count);

// One rank receiving `messages` messages of `count` elements each: ceil(messages / ports) - 1
// receive port times and one transfer time.
Time fan_in_bound(const CollectiveSpec& spec, const CostModel& model, Count messages, Count count);

// The largest block of a v-collective (its counts), or spec.count for a regular one.
Count largest_block(const CollectiveSpec& spec);

}  // namespace optcoll::algorithms
