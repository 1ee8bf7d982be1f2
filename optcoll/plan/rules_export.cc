// SPDX-License-Identifier: Apache-2.0
// File: choosing the library algorithm per collective, p and size (rules_export.h), from a
// model or a tuning table, and the report of the choices.
#include "optcoll/plan/rules_export.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/select.h"

namespace optcoll {
namespace {

// A library algorithm priced at one grid point.
struct Priced {
  const LibraryAlgorithm* algorithm = nullptr;
  double seconds = 0;
  algorithms::Params params;  // the registry relative's, resolved
};

// The grid point's priced library algorithms, best first (ties: table order).
struct GridPoint {
  std::uint64_t bytes = 0;
  std::vector<Priced> priced;
};

std::vector<const LibraryAlgorithm*> entries_for(MpiLibrary library, CollectiveKind kind) {
  std::vector<const LibraryAlgorithm*> out;
  for (const auto& a : library_algorithms()) {
    if (a.library == library && a.kind == kind) out.push_back(&a);
  }
  return out;
}

CollectiveSpec grid_spec(CollectiveKind kind, Rank p, std::uint64_t bytes, std::size_t elem_bytes) {
  const auto count = kind == CollectiveKind::kBarrier
                         ? Count{0}
                         : static_cast<Count>(std::max<std::uint64_t>(1, bytes / elem_bytes));
  CollectiveSpec spec = takes_counts(kind)
                            ? make_spec_v(kind, p,
                                          std::vector<Count>(kind == CollectiveKind::kAlltoallv
                                                                 ? static_cast<std::size_t>(p) * p
                                                                 : static_cast<std::size_t>(p),
                                                             count))
                            : make_spec(kind, p, count);
  spec.elem_bytes = elem_bytes;
  return spec;
}

void sort_best_first(std::vector<Priced>& priced) {
  std::stable_sort(priced.begin(), priced.end(),
                   [](const Priced& a, const Priced& b) { return a.seconds < b.seconds; });
}

// `params` with "auto" values as the builder resolves them (decide() leaves them "auto"
// where it priced the algorithm by its formula): the library needs the segment size.
algorithms::Params resolved_params(const algorithms::AlgorithmInfo& info,
                                   const CollectiveSpec& spec, const CostModel& model,
                                   const algorithms::Params& params) {
  const bool has_auto = std::any_of(params.values().begin(), params.values().end(),
                                    [](const auto& entry) { return entry.second == "auto"; });
  if (!has_auto) return params;
  return algorithms::Params::parse(algorithms::build(info, spec, params, model).params);
}

// Every library algorithm the library runs as named for `spec`, each with the fastest of
// its registry relative's variants under `model`.
std::vector<Priced> price_by_model(const std::vector<const LibraryAlgorithm*>& entries,
                                   const CollectiveSpec& spec, const CostModel& model) {
  std::vector<Priced> out;
  for (const auto* entry : entries) {
    if (!library_runs_as_named(*entry, spec)) continue;
    const auto& info = algorithms::lookup(entry->registry, spec.kind);
    const auto fixed = algorithms::Params::parse(entry->params);
    Priced best{entry, std::numeric_limits<double>::infinity(), {}};
    for (const auto& variant : tuning_variants(info)) {
      // The library takes a segment size from the file, nothing else: other variants
      // would price parameters it does not run with.
      const bool segment_variant = variant.starts_with("segment");
      if (!variant.empty() && !(segment_variant && entry->param == LibraryParam::kSegmentAsBytes)) {
        continue;
      }
      algorithms::Params params = variant_params(info, spec, model, variant);
      for (const auto& [name, value] : fixed.values()) {
        params.set(name, value);
      }
      if (algorithms::why_not(info, spec, params)) continue;
      const Decision d = decide(spec, model, entry->registry, params);
      if (d.predicted_time < best.seconds) {
        best.seconds = d.predicted_time;
        best.params = resolved_params(info, spec, model, d.params);
      }
    }
    if (std::isfinite(best.seconds)) out.push_back(std::move(best));
  }
  sort_best_first(out);
  return out;
}

// The runs of `point` whose algorithm is a library algorithm's relative, the fastest run
// of each.
std::vector<Priced> price_by_table(const std::vector<const LibraryAlgorithm*>& entries,
                                   const TuningPoint& point, const CollectiveSpec& spec) {
  std::vector<Priced> out;
  for (const auto* entry : entries) {
    if (!library_runs_as_named(*entry, spec)) continue;
    Priced best{entry, std::numeric_limits<double>::infinity(), {}};
    for (const auto& run : point.runs) {
      if (run.algorithm != entry->registry) continue;
      const bool segment_variant = run.variant.starts_with("segment");
      if (!run.variant.empty() &&
          !(segment_variant && entry->param == LibraryParam::kSegmentAsBytes)) {
        continue;
      }
      if (run.seconds < best.seconds) {
        best.seconds = run.seconds;
        best.params = algorithms::Params::parse(run.params);
      }
    }
    if (std::isfinite(best.seconds)) out.push_back(std::move(best));
  }
  sort_best_first(out);
  return out;
}

// The library algorithms timed at `point` that run as named for `spec`, the fastest time of
// each.
std::vector<Priced> price_by_timings(std::vector<const LibraryAlgorithm*> entries,
                                     const LibraryTimingPoint& point, const CollectiveSpec& spec,
                                     double margin) {
  std::vector<Priced> out;
  if (!entries.empty() && entries.front()->library == MpiLibrary::kOpenMpi) {
    entries.push_back(&open_mpi_default(spec.kind));
  }
  for (const auto* entry : entries) {
    if (!library_runs_as_named(*entry, spec)) continue;
    Priced best{entry, std::numeric_limits<double>::infinity(), {}};
    for (const auto& run : point.runs) {
      if (run.algorithm == entry) best.seconds = std::min(best.seconds, run.seconds);
    }
    if (std::isfinite(best.seconds)) out.push_back(std::move(best));
  }
  sort_best_first(out);
  const auto is_default = [](const Priced& x) {
    return x.algorithm->id == 0 && x.algorithm->name == kLibraryDefaultName;
  };
  const auto fallback = std::find_if(out.begin(), out.end(), is_default);
  if (fallback != out.end() && fallback != out.begin() &&
      fallback->seconds <= out.front().seconds * (1 + margin)) {
    std::rotate(out.begin(), fallback, fallback + 1);  // a near tie keeps the library's own
  }
  return out;
}

std::vector<std::uint64_t> grid_sizes(const ExportOptions& o) {
  std::vector<std::uint64_t> sizes;
  for (std::uint64_t b = o.min_bytes;; b *= o.factor) {
    sizes.push_back(b);
    if (b >= o.max_bytes || b > o.max_bytes / o.factor) break;
  }
  if (sizes.back() != o.max_bytes) sizes.push_back(o.max_bytes);
  return sizes;
}

// The measured points of `kind` (a tuning table's or library timings'), each priced by
// price(point, spec), by size; a note naming `source` if it has none.
template <typename Point, typename Price>
std::vector<GridPoint> measured_grid(const ExportOptions& o, CollectiveKind kind, Rank p,
                                     const std::vector<Point>& points, std::string_view source,
                                     Price price, std::vector<std::string>& notes) {
  std::vector<GridPoint> grid;
  for (const auto& point : points) {
    if (point.kind != kind) continue;
    grid.push_back({point.bytes, price(point, grid_spec(kind, p, point.bytes, o.elem_bytes))});
  }
  std::stable_sort(grid.begin(), grid.end(),
                   [](const GridPoint& a, const GridPoint& b) { return a.bytes < b.bytes; });
  if (grid.empty()) {
    notes.push_back(fmt::format("{}: {} has no point of it", collective_name(kind), source));
  }
  return grid;
}

// The grid of one collective at one p, priced; points without any applicable library
// algorithm are left out (and noted).
std::vector<GridPoint> price_grid(const ExportOptions& o, CollectiveKind kind, Rank p,
                                  const CostModel& model, const TuningTable* table,
                                  const LibraryTimings* timings, std::vector<std::string>& notes) {
  const auto entries = entries_for(o.library, kind);
  std::vector<GridPoint> grid;
  if (timings != nullptr) {
    grid = measured_grid(
        o, kind, p, timings->points, "the library timings",
        [&](const LibraryTimingPoint& point, const CollectiveSpec& spec) {
          return price_by_timings(entries, point, spec, o.default_margin);
        },
        notes);
  } else if (table != nullptr) {
    grid = measured_grid(
        o, kind, p, table->points, "the tuning table",
        [&](const TuningPoint& point, const CollectiveSpec& spec) {
          return price_by_table(entries, point, spec);
        },
        notes);
  } else {
    const auto sizes =
        kind == CollectiveKind::kBarrier ? std::vector<std::uint64_t>{0} : grid_sizes(o);
    for (const auto bytes : sizes) {
      const CollectiveSpec spec = grid_spec(kind, p, bytes, o.elem_bytes);
      grid.push_back({bytes, price_by_model(entries, spec, model)});
    }
  }
  const auto unpriced = std::erase_if(grid, [](const GridPoint& g) { return g.priced.empty(); });
  if (unpriced > 0) {
    notes.push_back(fmt::format("{} at p = {}: {} size(s) where none of {}'s algorithms applies",
                                collective_name(kind), p, unpriced, library_name(o.library)));
  }
  return grid;
}

LibraryRule rule_from(const ExportOptions& o, CollectiveKind kind, Rank p, std::uint64_t from,
                      const GridPoint& point, const Priced& chosen, std::string_view decided_by) {
  LibraryRule rule;
  rule.kind = kind;
  rule.nranks = p;
  rule.from_bytes = from;
  rule.from_key = library_message_key(o.library, kind, p, from).value_or(0);
  rule.algorithm = chosen.algorithm;
  rule.registry_params = chosen.params.to_string();
  if (chosen.algorithm->param == LibraryParam::kSegmentAsBytes && chosen.params.has("segment") &&
      chosen.params.get("segment") != "auto") {
    rule.segment_bytes =
        static_cast<std::uint64_t>(chosen.params.get_int("segment")) * o.elem_bytes;
  }
  rule.seconds = chosen.seconds;
  for (const auto& other : point.priced) {
    if (other.algorithm->name != chosen.algorithm->name ||
        other.algorithm->id != chosen.algorithm->id) {
      rule.runner_up = other.seconds;
      break;
    }
  }
  rule.decided_by = decided_by;
  return rule;
}

// Whether two choices would be written as the same rule.
bool same_choice(const LibraryRule& a, const LibraryRule& b) {
  return a.algorithm->id == b.algorithm->id && a.algorithm->name == b.algorithm->name &&
         a.segment_bytes == b.segment_bytes;
}

// One rule for every size: the library algorithm priced at every point whose geometric mean
// ratio to each point's best is least (ties: the earlier table entry).
void add_size_blind_rule(const ExportOptions& o, CollectiveKind kind, Rank p,
                         const std::vector<GridPoint>& grid, std::string_view decided_by,
                         std::vector<LibraryRule>& rules) {
  const Priced* best = nullptr;
  double best_mean = std::numeric_limits<double>::infinity();
  for (const auto& candidate : grid.front().priced) {
    double log_sum = 0;
    bool everywhere = true;
    for (const auto& point : grid) {
      const auto it = std::find_if(point.priced.begin(), point.priced.end(), [&](const Priced& x) {
        return x.algorithm == candidate.algorithm;
      });
      if (it == point.priced.end()) {
        everywhere = false;
        break;
      }
      log_sum +=
          std::log(std::max(it->seconds, 1e-300) / std::max(point.priced[0].seconds, 1e-300));
    }
    const double mean = log_sum / static_cast<double>(grid.size());
    if (everywhere && mean < best_mean) {
      best_mean = mean;
      best = &candidate;
    }
  }
  if (best != nullptr) rules.push_back(rule_from(o, kind, p, 0, grid.front(), *best, decided_by));
}

void add_rules(const ExportOptions& o, CollectiveKind kind, Rank p,
               const std::vector<GridPoint>& grid, std::string_view decided_by,
               std::vector<LibraryRule>& rules) {
  if (grid.empty()) return;
  if (!library_message_key(o.library, kind, p, 1)) {
    add_size_blind_rule(o, kind, p, grid, decided_by, rules);
    return;
  }
  std::optional<LibraryRule> last;
  std::uint64_t previous_bytes = 0;
  for (const auto& point : grid) {
    const std::uint64_t from =
        last ? static_cast<std::uint64_t>(std::sqrt(static_cast<double>(previous_bytes) *
                                                    static_cast<double>(point.bytes)))
             : 0;
    LibraryRule rule = rule_from(o, kind, p, from, point, point.priced.front(), decided_by);
    if (!last || !same_choice(*last, rule)) {
      rules.push_back(rule);
      last = rule;
    }
    previous_bytes = point.bytes;
  }
}

void check_options(const ExportOptions& o, const TuningTable* table,
                   const LibraryTimings* timings) {
  if (o.nranks.empty()) throw Error(ErrorCode::kInvalidArgument, "export: no p given (-p)");
  for (std::size_t i = 0; i < o.nranks.size(); ++i) {
    if (o.nranks[i] < 2) {
      throw Error(
          ErrorCode::kInvalidArgument,
          fmt::format("export: p = {}: a selection file is for 2 ranks or more", o.nranks[i]));
    }
    if (i > 0 && o.nranks[i] <= o.nranks[i - 1]) {
      throw Error(ErrorCode::kInvalidArgument,
                  "export: the p values must be ascending and distinct");
    }
  }
  if (o.min_bytes < 1 || o.min_bytes > o.max_bytes) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("export: sizes from {} to {} bytes: need 1 <= min <= max", o.min_bytes,
                            o.max_bytes));
  }
  if (o.factor < 2) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("export: size factor {}: must be at least 2", o.factor));
  }
  for (const auto kind : o.kinds) {
    if (entries_for(o.library, kind).empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("export: {} has no selection rules for {}", library_name(o.library),
                              collective_name(kind)));
    }
  }
  if (table != nullptr && (o.nranks.size() != 1 || o.nranks[0] != table->nranks)) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("export: the tuning table was measured at p = {} only; ask for -p {}",
                            table->nranks, table->nranks));
  }
  if (timings != nullptr && (o.nranks.size() != 1 || o.nranks[0] != timings->nranks)) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("export: the library timings were measured at p = {} only; ask for "
                            "-p {}",
                            timings->nranks, timings->nranks));
  }
  if (timings != nullptr && timings->library != o.library) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("export: the library timings are {}'s, not {}'s",
                            library_name(timings->library), library_name(o.library)));
  }
}

std::vector<CollectiveKind> kinds_to_export(const ExportOptions& o) {
  if (!o.kinds.empty()) return o.kinds;
  std::vector<CollectiveKind> kinds;
  for (const auto& a : library_algorithms()) {
    if (a.library == o.library && std::find(kinds.begin(), kinds.end(), a.kind) == kinds.end()) {
      kinds.push_back(a.kind);
    }
  }
  return kinds;
}

std::string format_bytes(std::uint64_t b) {
  if (b >= (std::uint64_t{1} << 20) && b % (std::uint64_t{1} << 20) == 0) {
    return fmt::format("{} MiB", b >> 20);
  }
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

}  // namespace

LibraryRules choose_library_rules(const ExportOptions& options, const CostModel& model,
                                  const TuningTable* table, const LibraryTimings* timings) {
  check_options(options, table, timings);
  const std::string_view decided_by = timings != nullptr ? "library timings"
                                      : table != nullptr ? "tuning table"
                                                         : "model";
  LibraryRules out;
  out.options = options;
  out.options.kinds = kinds_to_export(options);
  for (const auto kind : out.options.kinds) {
    for (const Rank p : options.nranks) {
      const auto grid = price_grid(options, kind, p, model, table, timings, out.notes);
      add_rules(options, kind, p, grid, decided_by, out.rules);
    }
  }
  return out;
}

std::string rules_report(const LibraryRules& rules) {
  std::string out = fmt::format(
      "| collective | p | from (bytes per rank) | {} algorithm | optcoll relative | time (us) | "
      "runner-up / chosen | decided by |\n|---|---|---|---|---|---|---|---|\n",
      library_name(rules.options.library));
  for (const auto& r : rules.rules) {
    const bool size_blind = !library_message_key(rules.options.library, r.kind, r.nranks, 1);
    out += fmt::format(
        "| {} | {} | {} | {}{} | {}{} | {:.2f} | {} | {} |\n", collective_name(r.kind), r.nranks,
        size_blind ? "every size" : format_bytes(r.from_bytes), r.algorithm->name,
        r.algorithm->id > 0 ? fmt::format(" ({})", r.algorithm->id) : "", r.algorithm->registry,
        r.registry_params.empty() ? "" : " (" + r.registry_params + ")", r.seconds * 1e6,
        r.runner_up > 0 ? fmt::format("{:.2f}", r.runner_up / r.seconds) : "-", r.decided_by);
  }
  return out;
}

}  // namespace optcoll
