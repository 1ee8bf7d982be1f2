// SPDX-License-Identifier: Apache-2.0
// File: barrier and maximum over the ranks of a transport (rank_sync.h).
#include "optcoll/api/rank_sync.h"

#include <span>

#include "optcoll/algorithms/registry.h"

namespace optcoll {
namespace {

Schedule max_schedule(Rank p) {
  CollectiveSpec spec = make_spec(CollectiveKind::kAllreduce, p, 1);
  spec.elem_bytes = sizeof(double);
  return algorithms::build("allreduce/recursive_doubling", spec);
}

}  // namespace

RankSync::RankSync(Transport& transport, std::chrono::milliseconds timeout,
                   std::uint32_t first_epoch)
    : transport_(transport),
      timeout_(timeout),
      barrier_(algorithms::build("barrier/dissemination",
                                 make_spec(CollectiveKind::kBarrier, transport.size(), 0))),
      maximum_(max_schedule(transport.size())),
      barrier_run_(barrier_, transport.rank()),
      maximum_run_(maximum_, transport.rank()),
      type_(Datatype::float64()),
      max_op_(ReduceOp::builtin("max", type_)),
      epoch_(first_epoch) {}

ExecOptions RankSync::options() { return ExecOptions{timeout_, epoch_++, true}; }

void RankSync::barrier() { barrier_run_.run(transport_, {}, type_, max_op_, options()); }

double RankSync::max(double mine) {
  double result = 0;
  maximum_run_.run(transport_,
                   {std::as_bytes(std::span<const double>(&mine, 1)),
                    std::as_writable_bytes(std::span<double>(&result, 1))},
                   type_, max_op_, options());
  return result;
}

}  // namespace optcoll
