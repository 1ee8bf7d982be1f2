// SPDX-License-Identifier: Apache-2.0
// File: the default search by cost formulas and finalists (select.h, "How candidates are
// priced"), and the choice it shares with the exhaustive search (exhaustive.cc).
#include "optcoll/plan/search.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/plan/compose.h"
#include "optcoll/plan/search_steps.h"

namespace optcoll::search {
namespace {

// The candidates' best options that the choice may rest on, with the composition last.
struct Contender {
  std::size_t entry = 0;  // index into Search::entries; entries.size() for the composition
  std::size_t option = 0;
  Time value = 0;
  std::uint64_t bytes = 0;
  bool known = true;  // simulated, or priced by an exact formula
};

std::vector<Contender> contenders(const Search& s, bool defaults_only) {
  std::vector<Contender> out;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    const Entry& e = s.entries[i];
    if (e.why_not || e.pruned || !e.not_evaluated.empty() || e.options.empty()) continue;
    const std::optional<std::size_t> best =
        defaults_only ? (e.options[0].evaluated() ? std::optional<std::size_t>(0) : std::nullopt)
                      : e.best();
    if (!best) continue;
    const Option& o = e.options[*best];
    out.push_back({i, *best, o.value(), o.bytes(), o.known()});
  }
  return out;
}

// The rules of select.h: the least time; among the candidates within kTieTolerance of it the
// fewest bytes, then the earlier registry entry; the composition only when strictly faster.
// With `defaults_only` (a composition's second try): the least time of the defaults, ties to
// the earlier entry, no near-ties. Among near-ties a known time (simulated, or an exact
// formula) goes before an estimate: an estimate the search could not afford to simulate is
// at best a near-tie, and choosing it would cost its building (at p = 2000 the optimal
// tree's O(p^3) DP, whose estimate there is the cheaper trees' time) for no predicted gain.
// (The exhaustive search knows every time, so its rules are unchanged.)
std::optional<Contender> choose(const Search& s, bool defaults_only) {
  const auto all = contenders(s, defaults_only);
  std::optional<Contender> chosen;
  if (!all.empty()) {
    const auto least = std::min_element(
        all.begin(), all.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
    if (defaults_only) return *least;
    for (const Contender& c : all) {
      if (c.value > least->value * (1 + kTieTolerance)) continue;
      if (!chosen || (c.known && !chosen->known) ||
          (c.known == chosen->known && c.bytes < chosen->bytes)) {
        chosen = c;
      }
    }
  }
  if (s.composed && !defaults_only && (!chosen || s.composed->value() < chosen->value)) {
    chosen =
        Contender{s.entries.size(), 0, s.composed->value(), 0, s.composed->simulated.has_value()};
  }
  return chosen;
}

Evaluation how_of(const Option& o) {
  if (o.simulated) return Evaluation::kSimulated;
  if (o.estimate->at_inter_costs) return Evaluation::kInterCosts;
  return o.estimate->exact ? Evaluation::kExactEstimate : Evaluation::kEstimated;
}

std::string composed_name(const Composed& c) {
  return "compose(" + c.first.algorithm + ", " + c.second.algorithm + ")";
}

// kept_key() of the decision that chooses `c`.
std::string composed_key(const Composed& c) {
  return kept_key(composed_name(c), c.first.params) + "; " +
         kept_key(c.second.algorithm, c.second.params);
}

std::uint64_t chosen_bytes(const Decision& d) {
  for (const Candidate& c : d.candidates) {
    if (c.algorithm == d.algorithm && c.predicted) return c.bytes_moved;
  }
  return 0;
}

// Every candidate for explain(), in Plan::candidates' order.
std::vector<Candidate> candidate_list(const Search& s) {
  std::vector<Candidate> evaluated, pruned, skipped, inapplicable;
  for (const Entry& e : s.entries) {
    const std::string name(e.info->name);
    if (e.why_not) {
      inapplicable.push_back(
          {name, std::nullopt, *e.why_not, {}, 0, {}, Evaluation::kNotApplicable});
    } else if (e.pruned) {
      pruned.push_back({name, std::nullopt, {}, {}, 0, e.bound, Evaluation::kPruned});
    } else if (const auto best = e.best(); best && e.not_evaluated.empty()) {
      const Option& o = e.options[*best];
      evaluated.push_back({name, o.value(), {}, o.resolved(), o.bytes(), {}, how_of(o)});
    } else {
      skipped.push_back(
          {name, std::nullopt, e.not_evaluated, {}, 0, {}, Evaluation::kNotEvaluated});
    }
  }
  if (s.composed) {
    const Composed& c = *s.composed;
    evaluated.push_back({composed_name(c),
                         c.value(),
                         {},
                         {},
                         c.simulated ? c.simulated_bytes : c.estimated_bytes,
                         {},
                         c.simulated ? Evaluation::kSimulated : Evaluation::kEstimated});
  }
  std::stable_sort(evaluated.begin(), evaluated.end(), [](const Candidate& a, const Candidate& b) {
    return *a.predicted < *b.predicted;
  });
  std::stable_sort(pruned.begin(), pruned.end(),
                   [](const Candidate& a, const Candidate& b) { return *a.bound < *b.bound; });
  for (auto* part : {&pruned, &skipped, &inapplicable}) {
    evaluated.insert(evaluated.end(), part->begin(), part->end());
  }
  return evaluated;
}

Decision decision_of(const Search& s, bool defaults_only) {
  const auto chosen = choose(s, defaults_only);
  if (!chosen) {
    throw Error(ErrorCode::kNotApplicable,
                fmt::format("no registry algorithm applies to {}", describe(s.spec)));
  }
  Decision d;
  if (chosen->entry == s.entries.size()) {
    const Composed& c = *s.composed;
    d.algorithm = composed_name(c);
    d.predicted_time = c.value();
    d.how = c.simulated ? Evaluation::kSimulated : Evaluation::kEstimated;
    d.phases = {{c.first.algorithm, c.first.params}, {c.second.algorithm, c.second.params}};
  } else {
    const Entry& e = s.entries[chosen->entry];
    const Option& o = e.options[chosen->option];
    d.algorithm = std::string(e.info->name);
    d.params = o.params;
    d.predicted_time = o.value();
    d.how = how_of(o);
  }
  d.candidates = candidate_list(s);
  return d;
}

// The composition candidate: each phase's own choice (no compositions inside), priced as the
// sum of the phases; nullopt when the kind has none or a phase has no applicable algorithm.
std::optional<Composed> composition_candidate(const CollectiveSpec& spec, const CostModel& model,
                                              const PlanOptions& options) {
  const auto composition = composition_for(spec);
  if (!composition) return std::nullopt;
  try {
    const Search first = begin(composition->first, model, options, /*compositions=*/false);
    const Search second = begin(composition->second, model, options, /*compositions=*/false);
    Composed c;
    c.first = decide(first);
    c.second = decide(second);
    c.alternative = {decide_defaults(first), decide_defaults(second)};
    c.work = chosen_work(first, c.first) + chosen_work(second, c.second) +
             chosen_work(first, c.alternative[0]) + chosen_work(second, c.alternative[1]);
    c.estimate = c.first.predicted_time + c.second.predicted_time;
    c.estimated_bytes = chosen_bytes(c.first) + chosen_bytes(c.second);
    return c;
  } catch (const Error& e) {
    if (e.code() == ErrorCode::kNotApplicable) return std::nullopt;
    throw;
  }
}

// The best prediction the choice may rest on (simulations and exact formulas), if any.
std::optional<Time> best_known(const Search& s) {
  std::optional<Time> best;
  for (const Entry& e : s.entries) {
    for (const Option& o : e.options) {
      if (o.known() && (!best || o.value() < *best)) best = o.value();
    }
  }
  return best;
}

// Step 2 of select.h: the inexact estimates within kFinalistWindow of the least time are
// simulated, least first, while their work fits what is left of the budget (one too large
// is passed over). Sequential: each simulation may move the window.
void simulate_finalists(Search& s) {
  for (;;) {
    Time least = std::numeric_limits<Time>::infinity();
    for (const Contender& c : contenders(s, false)) least = std::min(least, c.value);
    if (s.composed) least = std::min(least, s.composed->value());
    Option* next = nullptr;
    const Entry* next_entry = nullptr;
    bool composed_next = false;
    Time next_value = least * (1 + kFinalistWindow);
    const double left = s.options.simulation_budget - s.spent;
    for (Entry& e : s.entries) {
      if (e.why_not || e.pruned) continue;
      for (Option& o : e.options) {
        if (o.known() || !o.estimate || o.work > left || o.value() > next_value) continue;
        if (next && o.value() >= next->value()) continue;
        next = &o;
        next_entry = &e;
      }
    }
    if (s.composed && !s.composed->simulated && s.composed->work <= left &&
        s.composed->estimate <= next_value && (!next || s.composed->estimate < next->value())) {
      composed_next = true;
    }
    if (composed_next) {
      simulate_composed(s);
    } else if (next) {
      simulate_option(*next, *next_entry->info, s.spec, s.model, s.kept.get());
      s.spent += next->work;
    } else {
      return;
    }
  }
}

}  // namespace

std::optional<std::size_t> Entry::best() const {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < options.size(); ++i) {
    if (!options[i].evaluated()) continue;
    if (!best || options[i].value() < options[*best].value()) best = i;
  }
  return best;
}

void KeptSchedule::offer(const std::string& key, Time time, Schedule&& schedule) {
  std::optional<Schedule> dropped;  // freed outside the lock
  const std::lock_guard<std::mutex> lock(mutex_);
  if (time_ && time >= *time_) return;
  dropped = std::move(schedule_);
  key_ = key;
  time_ = time;
  schedule_ = std::move(schedule);
}

std::optional<Schedule> KeptSchedule::take(const std::string& key) {
  const std::lock_guard<std::mutex> lock(mutex_);
  if (!schedule_ || key_ != key) return std::nullopt;
  std::optional<Schedule> out = std::move(schedule_);
  schedule_.reset();
  time_.reset();
  return out;
}

std::string kept_key(std::string_view algorithm, const algorithms::Params& params) {
  return std::string(algorithm) + " (" + params.to_string() + ")";
}

std::string kept_key(const Decision& d) {
  if (d.phases.size() != 2) return kept_key(d.algorithm, d.params);
  return kept_key(d.algorithm, d.phases[0].params) + "; " +
         kept_key(d.phases[1].algorithm, d.phases[1].params);
}

double chosen_work(const Search& s, const Decision& d) {
  if (s.composed && !d.phases.empty()) return s.composed->work;
  for (const Entry& e : s.entries) {
    if (e.info->name != d.algorithm) continue;
    for (const Option& o : e.options) {
      if (o.params == d.params) return o.work;
    }
  }
  return 0;
}

void simulate_composed(Search& s) {
  Composed& c = *s.composed;
  for (const bool alternative : {false, true}) {
    const Decision& first = alternative ? c.alternative[0] : c.first;
    const Decision& second = alternative ? c.alternative[1] : c.second;
    if (alternative && first.algorithm == c.first.algorithm && first.params == c.first.params &&
        second.algorithm == c.second.algorithm && second.params == c.second.params) {
      break;  // the same phases
    }
    Schedule schedule = build_composed(s.spec, s.model, first.algorithm, first.params,
                                       second.algorithm, second.params);
    const Time t = simulate_checked(schedule, s.model);
    if (c.simulated && t >= *c.simulated) continue;
    if (alternative) {
      c.first = first;
      c.second = second;
    }
    c.simulated = t;
    c.simulated_bytes = bytes_moved(schedule);
    if (s.kept) s.kept->offer(composed_key(c), t, std::move(schedule));
  }
  s.spent += c.work;
}

Search begin(const CollectiveSpec& spec, const CostModel& model, const PlanOptions& options,
             bool compositions, bool keep) {
  Search s{spec, model, options, make_entries(spec, model), std::nullopt, 0, nullptr};
  if (keep) s.kept = std::make_shared<KeptSchedule>();
  parallel_for(s.entries.size(), options.workers,
               [&](std::size_t i) { prepare_entry(s.entries[i], spec, model, /*price=*/true); });
  // Candidates no formula prices (the model has a switch it does not describe) are
  // simulated as the exhaustive search does, those a bound rules out skipped.
  std::vector<std::size_t> unpriced;
  for (std::size_t i = 0; i < s.entries.size(); ++i) {
    const Entry& e = s.entries[i];
    if (e.why_not || !e.not_evaluated.empty()) continue;
    const Option& defaults = e.options[0];
    // Estimated at the shared network's costs (from above): simulated too where affordable.
    const bool from_above = defaults.estimate && defaults.estimate->at_inter_costs &&
                            defaults.work <= kMaxSimulatedWork;
    if (!defaults.estimate || from_above) unpriced.push_back(i);
  }
  simulate_entries(s, rank_unpriced(s, unpriced), [&s] { return best_known(s); });
  if (compositions) s.composed = composition_candidate(spec, model, options);
  // Its phases' sum is an estimate only where formulas price the phases; otherwise the
  // composition is simulated like every candidate they do not price.
  // A plan for one rank builds no whole schedule beyond kOneRankBuildWork for it.
  if (s.composed && !algorithms::closed_form_costs(spec, model) &&
      !(options.only_rank && s.composed->work > kOneRankBuildWork)) {
    simulate_composed(s);
  }
  simulate_finalists(s);
  return s;
}

Decision decide(const Search& s) { return decision_of(s, /*defaults_only=*/false); }

Decision decide_defaults(const Search& s) { return decision_of(s, /*defaults_only=*/true); }

bool confirm(Search& s, const Decision& d, const Schedule& schedule, Time simulated) {
  const std::uint64_t bytes = bytes_moved(schedule);
  if (!d.phases.empty()) {
    s.composed->simulated = simulated;
    s.composed->simulated_bytes = bytes;
  } else {
    for (Entry& e : s.entries) {
      if (e.info->name != d.algorithm) continue;
      for (Option& o : e.options) {
        if (!(o.params == d.params)) continue;
        o.simulated = simulated;
        o.simulated_bytes = bytes;
        o.simulated_params = schedule.params;
      }
    }
  }
  const Decision again = decide(s);
  return again.algorithm == d.algorithm && again.params == d.params;
}

}  // namespace optcoll::search
