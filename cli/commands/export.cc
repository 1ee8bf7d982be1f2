// SPDX-License-Identifier: Apache-2.0
// File: `optcoll export`: an MPI library's selection file from optcoll's model or a measured
// tuning table (optcoll/plan/rules_export.h; docs/export.md).
//
//   optcoll export --format ompi-rules -p 4,8,16 --model model.json --out rules.conf
//   optcoll export --format mpich-json -p 8 --tuning tuned.json --out csel.json
#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands/commands.h"
#include "cli/options.h"
#include "optcoll/model/error.h"
#include "optcoll/plan/rules_export.h"
#include "optcoll/plan/tuning.h"

namespace optcoll::cli {
namespace {

struct ExportCommandOptions {
  std::string format;
  std::vector<std::string> nranks;  // "4", "8", "2-16"
  std::vector<std::string> collectives;
  ModelOptions model;
  std::string tuning;
  std::string library_timings;
  std::optional<double> default_margin;
  std::size_t min_bytes = 8;
  std::size_t max_bytes = std::size_t{8} << 20;
  std::size_t factor = 2;
  std::string out;
  std::string report;
  bool list = false;
};

struct Format {
  std::string_view name;
  MpiLibrary library;
  std::string (*write)(const LibraryRules&, std::string_view);
};
constexpr Format kFormats[] = {
    {"ompi-rules", MpiLibrary::kOpenMpi, &to_ompi_rules},
    {"mpich-json", MpiLibrary::kMpich, &to_mpich_json},
};

const Format& find_format(std::string_view name) {
  for (const auto& f : kFormats) {
    if (f.name == name) return f;
  }
  throw_invalid("--format '{}': expected ompi-rules or mpich-json", name);
}

Rank parse_rank(std::string_view text, std::string_view whole) {
  Rank value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 2) {
    throw_invalid("-p '{}': expected rank counts of at least 2 (4,8 or a range 2-16)", whole);
  }
  return value;
}

// "4", "8", "2-16" -> 2..16 and the single values, ascending and distinct.
std::vector<Rank> parse_nranks(const std::vector<std::string>& items) {
  std::vector<Rank> out;
  for (const auto& item : items) {
    const auto dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(parse_rank(item, item));
      continue;
    }
    const Rank first = parse_rank(std::string_view(item).substr(0, dash), item);
    const Rank last = parse_rank(std::string_view(item).substr(dash + 1), item);
    if (last < first) throw_invalid("-p '{}': the range is empty", item);
    if (last - first > 4096) throw_invalid("-p '{}': at most 4097 sizes in a range", item);
    for (Rank p = first; p <= last; ++p) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<CollectiveKind> parse_kinds(const std::vector<std::string>& names) {
  std::vector<CollectiveKind> kinds;
  for (const auto& name : names) {
    const auto kind = parse_collective(name);
    if (!kind) throw_invalid("--collectives: '{}' is not a collective", name);
    kinds.push_back(*kind);
  }
  return kinds;
}

bool model_given(const ModelOptions& m) {
  const bool any_value = std::any_of(m.values.begin(), m.values.end(),
                                     [](const auto& entry) { return entry.second.has_value(); });
  const bool any_flag =
      std::any_of(m.flags.begin(), m.flags.end(), [](const auto& entry) { return entry.second; });
  return !m.file.empty() || m.abstract || !m.topology.empty() || !m.placement.empty() ||
         any_value || any_flag;
}

void run_export(const ExportCommandOptions& o) {
  if (o.list) {
    std::cout << library_algorithms_markdown();
    return;
  }
  if (o.format.empty() || o.nranks.empty() || o.out.empty()) {
    throw_invalid("export needs --format, -p and --out (or --list)");
  }
  const Format& format = find_format(o.format);
  const int sources =
      int{!o.tuning.empty()} + int{!o.library_timings.empty()} + int{model_given(o.model)};
  if (sources > 1) {
    throw_invalid(
        "--tuning, --library-timings and model options: give one (the relatives' measured "
        "times decide, the library's own measured times, or the model's predictions)");
  }
  ExportOptions options;
  options.library = format.library;
  options.nranks = parse_nranks(o.nranks);
  options.kinds = parse_kinds(o.collectives);
  options.min_bytes = o.min_bytes;
  options.max_bytes = o.max_bytes;
  options.factor = o.factor;
  const CostModel model = o.model.model();
  std::optional<TuningTable> table;
  if (!o.tuning.empty()) {
    table = parse_tuning_json(read_file(o.tuning));
    for (const auto& w : table->warnings) {
      std::cerr << "optcoll: warning: " << o.tuning << ": " << w << "\n";
    }
  }
  std::optional<LibraryTimings> timings;
  if (!o.library_timings.empty()) {
    timings = parse_library_timings_json(read_file(o.library_timings));
  }
  if (o.default_margin && !timings) {
    throw_invalid(
        "--default-margin is for --library-timings (where Open MPI's own decision "
        "was timed)");
  }
  if (o.default_margin) {
    if (!(*o.default_margin >= 0 && *o.default_margin <= 10)) {
      throw_invalid("--default-margin {}: expected a fraction from 0 to 10 (0.1: 10%)",
                    *o.default_margin);
    }
    options.default_margin = *o.default_margin;
  }
  const LibraryRules rules = choose_library_rules(options, model, table ? &*table : nullptr,
                                                  timings ? &*timings : nullptr);
  const std::string source =
      timings ? fmt::format("the library timings {} ({}, p = {}; {})", o.library_timings,
                            library_name(timings->library), timings->nranks, timings->source)
      : table ? fmt::format("the tuning table {} ({}, p = {}; {})", o.tuning, table->backend,
                            table->nranks, table->source)
              : fmt::format("optcoll's model: {}", o.model.describe(model));
  write_file(o.out, format.write(rules, source));
  const std::string report = rules_report(rules);
  if (!o.report.empty()) write_file(o.report, report);
  std::cout << fmt::format("{} rules for {} written to {} (chosen by {})\n\n", rules.rules.size(),
                           library_name(format.library), o.out, source);
  std::cout << report;
  for (const auto& note : rules.notes) std::cout << "note: " << note << "\n";
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto o = std::make_shared<ExportCommandOptions>();
  auto* sub = app.add_subcommand(
      "export",
      "write an MPI library's algorithm selection file (Open MPI coll/tuned rules, MPICH "
      "CSEL JSON) from optcoll's model or a measured tuning table");
  sub->add_option("--format", o->format, "ompi-rules or mpich-json");
  sub->add_option("-p,--nranks", o->nranks,
                  "communicator sizes: comma-separated, ranges allowed (4,8,16 or 2-16)")
      ->delimiter(',');
  sub->add_option("--collectives", o->collectives,
                  "comma-separated (default: every collective the library has rules for)")
      ->delimiter(',');
  o->model.add_to(*sub);
  sub->add_option("--tuning", o->tuning,
                  "a tuning table (optcoll tune): its measured times decide, at its p only");
  sub->add_option("--library-timings", o->library_timings,
                  "the library's own algorithms timed on this machine, each forced in turn "
                  "(bench/export/measure_library.py): the fastest decides, at their p only");
  sub->add_option("--default-margin", o->default_margin,
                  "with --library-timings: Open MPI's own decision, where timed, gives way only "
                  "to an algorithm faster by more than this fraction (default 0.1)");
  add_bytes_option(*sub, "--min-bytes", o->min_bytes, "smallest size per rank (default 8)");
  add_bytes_option(*sub, "--max-bytes", o->max_bytes, "largest size per rank (default 8M)");
  add_bytes_option(*sub, "--factor", o->factor, "sizes grow by this factor (default 2)");
  sub->add_option("--out", o->out, "the selection file to write");
  sub->add_flag("--list", o->list,
                "print the libraries' algorithms and their registry relatives (Markdown: "
                "docs/library_algorithms.md)");
  sub->add_option("--report", o->report, "also write the choices as Markdown to this file");
  sub->callback([o] { run_export(*o); });
}

}  // namespace optcoll::cli
