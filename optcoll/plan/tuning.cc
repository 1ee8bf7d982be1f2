// SPDX-License-Identifier: Apache-2.0
// File: tuning tables: reading, writing, variants, and the tuned choice (tuning.h).
#include "optcoll/plan/tuning.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"
#include "optcoll/plan/json_fields.h"

namespace optcoll {
namespace {

using nlohmann::json;

constexpr std::uint64_t kFnvOffset = 1469598103934665603ULL;
constexpr std::uint64_t kFnvPrime = 1099511628211ULL;

std::uint64_t fnv1a(std::uint64_t hash, std::uint64_t value) {
  for (int byte = 0; byte < 8; ++byte) {
    hash ^= (value >> (8 * byte)) & 0xFF;
    hash *= kFnvPrime;
  }
  return hash;
}

bool is_v_kind(CollectiveKind kind) { return takes_counts(kind); }

constexpr std::string_view kDocument = "tuning table";

[[noreturn]] void bad_entry(std::string_view where, std::string_view what) {
  json_fields::bad_entry(kDocument, where, what);
}
const json& field(const json& object, std::string_view name, std::string_view where) {
  return json_fields::field(object, name, kDocument, where);
}
std::string text_field(const json& object, std::string_view name, std::string_view where) {
  return json_fields::text_field(object, name, kDocument, where);
}
std::uint64_t count_field(const json& object, std::string_view name, std::string_view where) {
  return json_fields::count_field(object, name, kDocument, where);
}
double seconds_field(const json& object, std::string_view name, std::string_view where,
                     bool optional) {
  return json_fields::seconds_field(object, name, kDocument, where, optional);
}

bool known_variant(std::string_view variant) {
  if (variant.empty() || variant == "segment=half" || variant == "segment=double") return true;
  return variant == "radix=2" || variant == "radix=3" || variant == "radix=4" ||
         variant == "radix=8";
}

TunedRun parse_run(const json& entry, const std::string& where) {
  if (!entry.is_object()) bad_entry(where, "a run must be an object");
  TunedRun run;
  run.algorithm = text_field(entry, "algorithm", where);
  run.variant = entry.contains("variant") ? text_field(entry, "variant", where) : "";
  if (!known_variant(run.variant)) {
    bad_entry(where, fmt::format("unknown variant \"{}\" (known: \"\", radix=2|3|4|8, "
                                 "segment=half|double)",
                                 run.variant));
  }
  run.params = entry.contains("params") ? text_field(entry, "params", where) : "";
  run.seconds = seconds_field(entry, "seconds", where, /*optional=*/false);
  run.predicted = seconds_field(entry, "predicted", where, /*optional=*/true);
  return run;
}

TuningPoint parse_point(const json& entry, std::size_t index, std::vector<std::string>& warnings) {
  const std::string where = fmt::format("points[{}]", index);
  if (!entry.is_object()) bad_entry(where, "a point must be an object");
  TuningPoint point;
  const std::string collective = text_field(entry, "collective", where);
  const auto kind = parse_collective(collective);
  if (!kind) bad_entry(where, fmt::format("unknown collective \"{}\"", collective));
  point.kind = *kind;
  point.counts = entry.contains("counts") ? text_field(entry, "counts", where) : "regular";
  point.counts_fingerprint =
      entry.contains("counts_fingerprint") ? count_field(entry, "counts_fingerprint", where) : 0;
  point.bytes = count_field(entry, "bytes", where);
  const json& runs = field(entry, "runs", where);
  if (!runs.is_array()) bad_entry(where, "\"runs\" must be an array");
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const std::string run_where = fmt::format("{}.runs[{}]", where, r);
    TunedRun run = parse_run(runs[r], run_where);
    const auto* info = algorithms::find_algorithm(run.algorithm);
    if (info == nullptr || info->collective != point.kind) {
      warnings.push_back(
          fmt::format("{}: algorithm \"{}\" is not in this registry's {} "
                      "algorithms: its run is set aside",
                      run_where, run.algorithm, collective));
      continue;
    }
    point.runs.push_back(std::move(run));
  }
  return point;
}

// log(t) at log(x) on the line through (log x0, log t0) and (log x1, log t1).
double interpolate_log(double x0, double t0, double x1, double t1, double x) {
  const double w = (std::log(x) - std::log(x0)) / (std::log(x1) - std::log(x0));
  return std::exp(std::log(t0) + w * (std::log(t1) - std::log(t0)));
}

bool applicable(const TunedRun& run, const CollectiveSpec& spec) {
  const auto* info = algorithms::find_algorithm(run.algorithm);
  if (info == nullptr) return false;
  // The variant's parameters need the model only for "segment"; applicability does not.
  algorithms::Params params = algorithms::resolve_params(*info, {});
  if (run.variant.starts_with("radix=")) params.set("radix", run.variant.substr(6));
  return !algorithms::why_not(*info, spec, params).has_value();
}

// The fastest applicable run of `point` for `spec`, or nullptr.
const TunedRun* fastest(const TuningPoint& point, const CollectiveSpec& spec) {
  const TunedRun* best = nullptr;
  for (const auto& run : point.runs) {
    if ((best == nullptr || run.seconds < best->seconds) && applicable(run, spec)) best = &run;
  }
  return best;
}

// Between two grid points: every candidate measured at both, its time interpolated in log
// size; the least wins.
std::optional<TunedChoice> interpolated(const TuningPoint& below, const TuningPoint& above,
                                        const CollectiveSpec& spec, std::uint64_t bytes) {
  std::optional<TunedChoice> best;
  for (const auto& low : below.runs) {
    const auto high = std::find_if(above.runs.begin(), above.runs.end(), [&](const TunedRun& r) {
      return r.algorithm == low.algorithm && r.variant == low.variant;
    });
    if (high == above.runs.end() || !applicable(low, spec)) continue;
    const double t = interpolate_log(static_cast<double>(below.bytes), low.seconds,
                                     static_cast<double>(above.bytes), high->seconds,
                                     static_cast<double>(bytes));
    if (!best || t < best->seconds) {
      const bool nearer_below =
          std::log(static_cast<double>(bytes)) - std::log(static_cast<double>(below.bytes)) <=
          std::log(static_cast<double>(above.bytes)) - std::log(static_cast<double>(bytes));
      best = TunedChoice{low.algorithm, low.variant, nearer_below ? below.bytes : above.bytes, t,
                         true};
    }
  }
  return best;
}

}  // namespace

std::uint64_t tuning_bytes(const CollectiveSpec& spec) {
  const auto eb = static_cast<std::uint64_t>(spec.elem_bytes);
  if (spec.kind == CollectiveKind::kBarrier) return 0;
  if (!is_v_kind(spec.kind)) return static_cast<std::uint64_t>(spec.count) * eb;
  std::uint64_t total = 0;
  for (const Count c : spec.counts) total += static_cast<std::uint64_t>(c);
  if (spec.counts_of) {  // its block to itself is in both its row and its column
    total -= static_cast<std::uint64_t>(spec.counts[static_cast<std::size_t>(*spec.counts_of)]);
  }
  const auto p = static_cast<std::uint64_t>(spec.nranks);
  const std::uint64_t blocks = spec.kind == CollectiveKind::kAlltoallv ? p * p : p;
  return blocks == 0 ? 0 : total * eb / blocks;
}

std::uint64_t counts_fingerprint(const CollectiveSpec& spec) {
  if (!is_v_kind(spec.kind)) return 0;
  std::uint64_t hash = kFnvOffset;
  if (spec.counts_of) hash = fnv1a(hash, static_cast<std::uint64_t>(*spec.counts_of) + 1);
  for (const Count c : spec.counts) hash = fnv1a(hash, static_cast<std::uint64_t>(c));
  return hash;
}

std::string registry_fingerprint() {
  std::uint64_t hash = kFnvOffset;
  for (const auto& info : algorithms::all_algorithms()) {
    for (const char c : info.name) hash = fnv1a(hash, static_cast<unsigned char>(c));
  }
  return fmt::format("{:016x}", hash);
}

TuningTable parse_tuning_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kParse, fmt::format("tuning table is not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) throw Error(ErrorCode::kParse, "tuning table must hold a JSON object");
  const std::string format = text_field(doc, "format", "the table");
  if (format != kTuningFormat) {
    bad_entry("the table", fmt::format("format \"{}\" is not \"{}\"", format, kTuningFormat));
  }
  TuningTable table;
  table.backend = text_field(doc, "backend", "the table");
  if (table.backend != "threads" && table.backend != "mpi") {
    bad_entry("the table",
              fmt::format("unknown backend \"{}\" (known: threads, mpi)", table.backend));
  }
  const std::uint64_t nranks = count_field(doc, "nranks", "the table");
  if (nranks < 1 || nranks > (std::uint64_t{1} << 24)) {
    bad_entry("the table", fmt::format("nranks {} is out of range", nranks));
  }
  table.nranks = static_cast<Rank>(nranks);
  table.registry = text_field(doc, "registry", "the table");
  table.source = doc.contains("source") ? text_field(doc, "source", "the table") : "";
  if (table.registry != registry_fingerprint()) {
    table.warnings.push_back(fmt::format(
        "the table was measured with another registry ({}, this one is {}): its algorithms "
        "that still exist are used",
        table.registry, registry_fingerprint()));
  }
  const json& points = field(doc, "points", "the table");
  if (!points.is_array()) bad_entry("the table", "\"points\" must be an array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    table.points.push_back(parse_point(points[i], i, table.warnings));
  }
  return table;
}

std::string tuning_to_json(const TuningTable& table) {
  json points = json::array();
  for (const auto& point : table.points) {
    json runs = json::array();
    for (const auto& run : point.runs) {
      json entry = {{"algorithm", run.algorithm},
                    {"variant", run.variant},
                    {"params", run.params},
                    {"seconds", run.seconds}};
      if (run.predicted >= 0) entry["predicted"] = run.predicted;
      runs.push_back(std::move(entry));
    }
    json entry = {{"collective", collective_name(point.kind)},
                  {"counts", point.counts},
                  {"bytes", point.bytes},
                  {"runs", std::move(runs)}};
    if (point.counts_fingerprint != 0) entry["counts_fingerprint"] = point.counts_fingerprint;
    points.push_back(std::move(entry));
  }
  const json doc = {{"format", kTuningFormat}, {"backend", table.backend},
                    {"nranks", table.nranks},  {"registry", table.registry},
                    {"source", table.source},  {"points", std::move(points)}};
  return doc.dump(1);
}

std::vector<std::string> tuning_variants(const algorithms::AlgorithmInfo& info) {
  std::vector<std::string> variants{""};
  for (const auto& param : info.params()) {
    if (param.name == "radix") {
      for (const char* radix : {"radix=2", "radix=3", "radix=4", "radix=8"}) {
        if (param.default_value != std::string_view(radix).substr(6)) variants.emplace_back(radix);
      }
    } else if (param.name == "segment") {
      variants.emplace_back("segment=half");
      variants.emplace_back("segment=double");
    }
  }
  return variants;
}

algorithms::Params variant_params(const algorithms::AlgorithmInfo& info, const CollectiveSpec& spec,
                                  const CostModel& model, std::string_view variant) {
  algorithms::Params params = algorithms::resolve_params(info, {});
  if (variant.empty()) return params;
  if (variant.starts_with("radix=") && params.has("radix")) {
    params.set("radix", std::string(variant.substr(6)));
    return params;
  }
  if ((variant == "segment=half" || variant == "segment=double") && params.has("segment")) {
    // The segment the builder chooses for this spec and model, halved or doubled.
    const Schedule defaults = algorithms::build(info, spec, params, model);
    const auto chosen = algorithms::Params::parse(defaults.params);
    if (!chosen.has("segment")) return params;  // nothing to segment (p or n too small)
    const std::int64_t segment = chosen.get_int("segment");
    const std::int64_t varied =
        variant == "segment=half" ? std::max<std::int64_t>(1, segment / 2) : segment * 2;
    params.set("segment", std::to_string(varied));
    return params;
  }
  throw_invalid("{} has no variant \"{}\"", info.name, variant);
}

TuningLookup tuned_choice(const TuningTable& table, const CollectiveSpec& spec,
                          std::string_view backend) {
  if (table.nranks != spec.nranks) {
    return {std::nullopt,
            fmt::format("the table was measured at p = {}, not {}", table.nranks, spec.nranks)};
  }
  if (!backend.empty() && backend != table.backend) {
    return {std::nullopt, fmt::format("the table was measured on the {} backend, not {}",
                                      table.backend, backend)};
  }
  const std::uint64_t bytes = tuning_bytes(spec);
  const std::uint64_t fingerprint = counts_fingerprint(spec);
  std::vector<const TuningPoint*> points;
  for (const auto& point : table.points) {
    if (point.kind == spec.kind && point.counts_fingerprint == fingerprint) {
      points.push_back(&point);
    }
  }
  const std::string_view name = collective_name(spec.kind);
  if (points.empty()) {
    return {std::nullopt, is_v_kind(spec.kind)
                              ? fmt::format("the table has no {} point with these counts", name)
                              : fmt::format("the table has no {} point", name)};
  }
  std::sort(points.begin(), points.end(),
            [](const TuningPoint* a, const TuningPoint* b) { return a->bytes < b->bytes; });
  if (bytes < points.front()->bytes || bytes > points.back()->bytes) {
    return {std::nullopt, fmt::format("{} B per rank is outside the measured {} .. {} B", bytes,
                                      points.front()->bytes, points.back()->bytes)};
  }
  const auto above =
      std::lower_bound(points.begin(), points.end(), bytes,
                       [](const TuningPoint* p, std::uint64_t b) { return p->bytes < b; });
  std::optional<TunedChoice> choice;
  if ((*above)->bytes == bytes) {
    if (const TunedRun* run = fastest(**above, spec)) {
      choice = TunedChoice{run->algorithm, run->variant, bytes, run->seconds, false};
    }
  } else {
    choice = interpolated(**(above - 1), **above, spec, bytes);
  }
  if (!choice) {
    return {std::nullopt,
            fmt::format("no algorithm measured near {} B per rank applies to this call", bytes)};
  }
  const std::string how = choice->interpolated
                              ? fmt::format("interpolated between the measured {} and {} B",
                                            (*(above - 1))->bytes, (*above)->bytes)
                              : fmt::format("measured at {} B per rank", bytes);
  return {choice, how};
}

Plan plan_tuned(const CollectiveSpec& spec, const CostModel& model, const TuningTable& table,
                std::string_view backend, const PlanOptions& options) {
  const TuningLookup lookup = tuned_choice(table, spec, backend);
  if (!lookup.choice) {
    Plan p = plan(spec, model, "auto", {}, options);
    p.decided_by =
        fmt::format("the model (the tuning table has no choice here: {})", lookup.reason);
    return p;
  }
  const TunedChoice& c = *lookup.choice;
  const auto& info = algorithms::lookup(c.algorithm, spec.kind);
  Plan p = plan(spec, model, c.algorithm, variant_params(info, spec, model, c.variant), options);
  p.decided_by =
      fmt::format("the tuning table: {}{}, {}: {:.4g} us per call", c.algorithm,
                  c.variant.empty() ? "" : " (" + c.variant + ")", lookup.reason, c.seconds * 1e6);
  return p;
}

}  // namespace optcoll
