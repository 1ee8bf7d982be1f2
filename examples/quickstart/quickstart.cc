// SPDX-License-Identifier: Apache-2.0
// File: the README's C++ example, built against an installed optcoll by tools/test.sh.
// Plans an irregular gatherv, verifies and explains the choice, then runs an allreduce on
// eight threads and checks it.
#include <cstdio>
#include <vector>

#include "optcoll/api/communicator.h"
#include "optcoll/model/distributions.h"
#include "optcoll/plan/select.h"
#include "optcoll/verify/verify.h"

int main() {
  // Plan, verify and price without running anything.
  const auto counts = optcoll::distribution_counts(optcoll::Distribution::kSkewed, 64, 1000);
  const auto spec = optcoll::make_spec_v(optcoll::CollectiveKind::kGatherv, 64, counts, /*root=*/0);
  const optcoll::Plan plan = optcoll::plan(spec, optcoll::reference_cluster_model(), "auto");
  std::printf("%s", plan.explain().c_str());
  if (!optcoll::verify(plan.schedule).ok()) return 1;

  // Run a collective on 8 threads; the plan is made once and reused.
  bool correct = true;
  optcoll::run_threads(8, [&](optcoll::Communicator& comm) {
    std::vector<double> in(1 << 16, comm.rank()), out(1 << 16);
    comm.allreduce<double>(in, out, "sum");
    for (const double v : out) correct = correct && v == 28.0;  // 0 + 1 + ... + 7
  });
  std::printf("allreduce on 8 threads: %s\n", correct ? "correct" : "WRONG");
  return correct ? 0 : 1;
}
