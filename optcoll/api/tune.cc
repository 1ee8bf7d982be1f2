// SPDX-License-Identifier: Apache-2.0
// File: measuring the registry over a grid (tune.h).
#include "optcoll/api/tune.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/api/communicator.h"
#include "optcoll/api/rank_sync.h"
#include "optcoll/api/reference.h"
#include "optcoll/exec/executor.h"
#include "optcoll/exec/threads/world.h"
#include "optcoll/model/distributions.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"
#include "optcoll/sim/simulator.h"

namespace optcoll {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kElemBytes = 8;  // tune measures doubles, summed
constexpr std::byte kPoison{0xAB};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

CollectiveSpec spec_for(const TuneCase& c, std::uint64_t bytes, Rank p, const TuneOptions& o) {
  const auto elements = static_cast<Count>(std::max<std::uint64_t>(1, bytes / kElemBytes));
  CollectiveSpec spec = takes_counts(c.kind)
                            ? make_spec_v(c.kind, p,
                                          distribution_counts(parse_distribution(c.counts), p,
                                                              elements, o.seed, o.dist_k))
                            : make_spec(c.kind, p, elements);
  spec.elem_bytes = kElemBytes;
  return spec;
}

Time predict(const Schedule& schedule, const CostModel& model) {
  const SimResult r = simulate(schedule, model);
  OPTCOLL_CHECK(r.status == SimStatus::kOk, "{} deadlocks in simulation", schedule.algorithm);
  return r.makespan;
}

// Index of the candidate with this algorithm and schedule parameters, adding it if new.
std::size_t find_or_add(std::vector<TuneCandidate>& candidates, TuneCandidate candidate) {
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].algorithm == candidate.algorithm &&
        candidates[i].schedule.params == candidate.schedule.params) {
      return i;
    }
  }
  candidates.push_back(std::move(candidate));
  return candidates.size() - 1;
}

// Every applicable registry algorithm with every variant, its duplicates (same parameters)
// dropped.
std::vector<TuneCandidate> registry_candidates(const CollectiveSpec& spec, const CostModel& model) {
  std::vector<TuneCandidate> candidates;
  for (const auto* info : algorithms::algorithms_for(spec.kind)) {
    for (const std::string& variant : tuning_variants(*info)) {
      algorithms::Params params;
      try {
        params = variant_params(*info, spec, model, variant);
      } catch (const Error& e) {
        if (e.code() == ErrorCode::kNotApplicable) continue;
        throw;
      }
      if (algorithms::why_not(*info, spec, params)) continue;
      Schedule schedule = algorithms::build(*info, spec, params, model);
      const double predicted = predict(schedule, model);
      find_or_add(candidates,
                  TuneCandidate{std::string(info->name), variant, std::move(schedule), predicted});
    }
  }
  return candidates;
}

// Bytes of every rank's output for spec: what checking against the reference holds.
std::uint64_t output_bytes(const Layout& layout) {
  std::uint64_t total = 0;
  for (Rank r = 0; r < layout.nranks(); ++r) {
    total += static_cast<std::uint64_t>(layout.output_count(r)) * kElemBytes;
  }
  return total;
}

Bytes input_of(const Layout& layout, Rank r) {
  const bool bcast = layout.kind() == CollectiveKind::kBcast;
  const Count n = bcast ? (r == layout.root() ? layout.total() : 0) : layout.input_count(r);
  return make_input(Datatype::float64(), "sum", r, n);
}

std::vector<Bytes> expected_outputs(const CollectiveSpec& spec) {
  const Layout layout = Layout::borrowing(spec);
  std::vector<Bytes> inputs;
  for (Rank r = 0; r < spec.nranks; ++r) inputs.push_back(input_of(layout, r));
  const auto type = Datatype::float64();
  return reference_outputs(spec, inputs, type, ReduceOp::builtin("sum", type));
}

TunePointPlan plan_point(const TuneCase& c, std::uint64_t bytes, Rank p, const TuneOptions& o,
                         const CostModel& model) {
  TunePointPlan point;
  point.tune_case = c;
  point.bytes = bytes;
  point.spec = spec_for(c, bytes, p, o);
  point.candidates = registry_candidates(point.spec, model);
  const Plan chosen = plan(point.spec, model);
  // Auto's choice is one of the candidates, unless it is a composition (or parameters no
  // variant gives): then it is measured too, for its regret, but stays out of the table.
  point.auto_pick =
      find_or_add(point.candidates,
                  TuneCandidate{chosen.algorithm, "auto", chosen.schedule, chosen.predicted_time});
  if (o.previous != nullptr) {
    const TuningLookup lookup = tuned_choice(*o.previous, point.spec, o.backend);
    if (lookup.choice) {
      const auto& info = algorithms::lookup(lookup.choice->algorithm, point.spec.kind);
      const auto params = variant_params(info, point.spec, model, lookup.choice->variant);
      Schedule schedule = algorithms::build(info, point.spec, params, model);
      const double predicted = predict(schedule, model);
      point.tuned_pick = find_or_add(point.candidates,
                                     TuneCandidate{lookup.choice->algorithm, lookup.choice->variant,
                                                   std::move(schedule), predicted});
    }
  }
  if (output_bytes(Layout(point.spec)) <= o.check_bytes) {
    point.expected = expected_outputs(point.spec);
  }
  return point;
}

// One rank's buffers for a point, allocated and first touched by that rank.
struct PointBuffers {
  Bytes input;
  Bytes output;
  Bytes initial_output;  // bcast root: the message; others: poison
};

PointBuffers buffers_for(const Layout& layout, Rank me) {
  PointBuffers b;
  b.input = input_of(layout, me);
  b.initial_output.assign(static_cast<std::size_t>(layout.output_count(me)) * kElemBytes, kPoison);
  if (layout.kind() == CollectiveKind::kBcast && me == layout.root()) b.initial_output = b.input;
  b.output = b.initial_output;
  if (layout.kind() == CollectiveKind::kBcast) b.input.clear();  // the message is the output
  return b;
}

double time_calls(RankSync& sync, Execution& run, PointBuffers& b, int calls) {
  const auto type = Datatype::float64();
  return slowest_per_call(sync, run, {b.input, b.output}, type, ReduceOp::builtin("sum", type),
                          calls);
}

struct Measured {
  std::vector<double> seconds;
  std::vector<std::string> wrong;
  bool checked = false;
};

Measured measure_point(RankSync& sync, const TunePointPlan& plan, const TuneOptions& o) {
  const Rank me = sync.transport().rank();
  const Layout layout = Layout::borrowing(plan.spec);
  PointBuffers b = buffers_for(layout, me);
  std::vector<std::unique_ptr<Execution>> runs;
  for (const auto& c : plan.candidates) {
    runs.push_back(std::make_unique<Execution>(c.schedule, me, /*known_well_formed=*/false));
  }
  const std::size_t n = runs.size();
  Measured m;
  m.checked = !plan.expected.empty();
  // A warm-up call and a probe of each candidate: how many calls make a round.
  std::vector<int> calls(n, 1);
  const auto type = Datatype::float64();
  const auto sum = ReduceOp::builtin("sum", type);
  for (std::size_t k = 0; k < n; ++k) {
    calls[k] = calls_per_round(sync, *runs[k], {b.input, b.output}, type, sum, o.round_seconds,
                               o.max_calls);
  }
  std::vector<std::vector<double>> samples(n);
  for (int round = 0; round < o.rounds; ++round) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t k = (j + static_cast<std::size_t>(round)) % n;
      if (round == 0) b.output = b.initial_output;  // what a candidate that did nothing leaves
      samples[k].push_back(time_calls(sync, *runs[k], b, calls[k]));
      if (round == 0 && m.checked) {
        const bool differs = b.output != plan.expected[static_cast<std::size_t>(me)];
        if (sync.max(differs ? 1.0 : 0.0) > 0) m.wrong.push_back(plan.candidates[k].algorithm);
      }
    }
  }
  for (const auto& s : samples) m.seconds.push_back(median_of(s));
  return m;
}

TunePointResult result_of(const TunePointPlan& plan, Measured measured) {
  TunePointResult r;
  r.point.kind = plan.spec.kind;
  r.point.counts = plan.tune_case.counts;
  r.point.counts_fingerprint = counts_fingerprint(plan.spec);
  r.point.bytes = tuning_bytes(plan.spec);  // v-kinds: the mean block, not the grid's size
  r.seconds = std::move(measured.seconds);
  r.checked = measured.checked;
  r.wrong = std::move(measured.wrong);
  for (std::size_t k = 0; k < plan.candidates.size(); ++k) {
    const auto& c = plan.candidates[k];
    if (r.seconds[k] < r.seconds[r.best]) r.best = k;
    if (c.variant == "auto") continue;  // auto's own composition: not a registry algorithm
    r.point.runs.push_back(
        TunedRun{c.algorithm, c.variant, c.schedule.params, r.seconds[k], c.predicted});
  }
  r.auto_pick = plan.auto_pick;
  r.tuned_pick = plan.tuned_pick;
  return r;
}

std::string point_label(const TunePointPlan& p) {
  return fmt::format("{} {} B", tune_case_name(p.tune_case), p.bytes);
}

}  // namespace

TuneCase parse_tune_case(std::string_view text) {
  const auto colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  const auto kind = parse_collective(name);
  if (!kind) throw_invalid("tune: unknown collective '{}'", name);
  if (*kind == CollectiveKind::kBarrier || *kind == CollectiveKind::kAlltoallv) {
    throw_invalid(
        "tune: {} is not tuned ({})", name,
        *kind == CollectiveKind::kBarrier ? "it has no size" : "its counts are a matrix per call");
  }
  TuneCase c{*kind, "regular"};
  if (takes_counts(*kind)) {
    if (colon == std::string_view::npos) {
      throw_invalid("tune: {} needs a distribution of its counts, e.g. {}:spikes", name, name);
    }
    c.counts = std::string(text.substr(colon + 1));
    parse_distribution(c.counts);  // throws naming the known ones
  } else if (colon != std::string_view::npos) {
    throw_invalid("tune: {} has regular counts: no distribution ('{}')", name, text);
  }
  return c;
}

std::string tune_case_name(const TuneCase& c) {
  const std::string name(collective_name(c.kind));
  return c.counts == "regular" ? name : name + ":" + c.counts;
}

std::vector<TuneCase> default_tune_cases() {
  std::vector<TuneCase> cases;
  for (const char* text : {"allreduce", "bcast", "allgather", "reduce_scatter_block", "reduce",
                           "alltoall", "gatherv:spikes", "scatterv:skewed"}) {
    cases.push_back(parse_tune_case(text));
  }
  return cases;
}

std::vector<std::uint64_t> tune_sizes(std::uint64_t min_bytes, std::uint64_t max_bytes,
                                      std::uint64_t factor) {
  if (min_bytes < kElemBytes || min_bytes > max_bytes) {
    throw_invalid("tune: the sizes must run from at least {} B up, got {} .. {}", kElemBytes,
                  min_bytes, max_bytes);
  }
  if (factor < 2) throw_invalid("tune: --factor must be at least 2, got {}", factor);
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = min_bytes; b <= max_bytes; b *= factor) {
    sizes.push_back(b);
    if (b > max_bytes / factor) break;
  }
  if (sizes.back() != max_bytes) sizes.push_back(max_bytes);
  return sizes;
}

CostModel tune_model(const TuneOptions& options) {
  return options.model ? *options.model : default_model(options.backend);
}

std::vector<TunePointPlan> plan_tune(const TuneOptions& options, Rank nranks) {
  if (nranks < 2) throw_invalid("tune needs at least 2 ranks, got {}", nranks);
  if (options.rounds < 1) throw_invalid("tune: rounds must be at least 1, got {}", options.rounds);
  if (options.max_calls < 1) {
    throw_invalid("tune: max calls must be at least 1, got {}", options.max_calls);
  }
  const CostModel model = tune_model(options);
  std::vector<TunePointPlan> plans;
  for (const auto& c : options.cases) {
    for (const std::uint64_t bytes : options.sizes) {
      plans.push_back(plan_point(c, bytes, nranks, options, model));
    }
  }
  return plans;
}

TuneReport measure_tune(Transport& transport, const std::vector<TunePointPlan>& plans,
                        const TuneOptions& options, const TuneProgress& progress) {
  RankSync sync(transport, options.timeout);
  TuneReport report;
  report.table.backend = options.backend;
  report.table.nranks = transport.size();
  report.table.registry = registry_fingerprint();
  const auto start = Clock::now();
  const bool speaker = transport.rank() == 0;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    if (speaker && progress) progress(i, plans.size(), point_label(plans[i]));
    report.points.push_back(result_of(plans[i], measure_point(sync, plans[i], options)));
    report.table.points.push_back(report.points.back().point);
    const double elapsed = sync.max(seconds_since(start));
    if (options.budget_seconds > 0 && elapsed > options.budget_seconds && i + 1 < plans.size()) {
      report.budget_exhausted = true;
      break;
    }
  }
  if (speaker && progress) progress(report.points.size(), plans.size(), "");
  report.seconds = sync.max(seconds_since(start));
  return report;
}

TuneReport tune_on_threads(Rank nranks, const TuneOptions& options, const TuneProgress& progress) {
  std::vector<TunePointPlan> plans = plan_tune(options, nranks);
  ThreadWorld world(nranks, WorldOptions{options.timeout});
  TuneReport report;
  world.run([&](Transport& transport) {
    TuneReport mine = measure_tune(transport, plans, options, progress);
    if (transport.rank() == 0) report = std::move(mine);
  });
  report.plans = std::move(plans);
  report.ran_on = world.describe();
  report.table.source = report.ran_on;
  return report;
}

ModelError model_error(const TuneReport& report) {
  std::vector<double> errors;
  for (std::size_t i = 0; i < report.points.size(); ++i) {
    const auto& plan = report.plans[i];
    for (std::size_t k = 0; k < plan.candidates.size(); ++k) {
      const double measured = report.points[i].seconds[k];
      if (measured > 0) errors.push_back(std::abs(plan.candidates[k].predicted / measured - 1));
    }
  }
  ModelError e;
  e.runs = errors.size();
  if (errors.empty()) return e;
  std::sort(errors.begin(), errors.end());
  e.median = errors[errors.size() / 2];
  e.p90 = errors[std::min(errors.size() - 1, errors.size() * 9 / 10)];
  return e;
}

}  // namespace optcoll
