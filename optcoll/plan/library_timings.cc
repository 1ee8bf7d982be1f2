// SPDX-License-Identifier: Apache-2.0
// File: reading library timings (rules_export.h, "LibraryTimings"): the MPI library's own
// algorithms timed on the machine, each forced in turn (bench/export/measure_library.py).
#include <algorithm>
#include <array>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"
#include "optcoll/plan/json_fields.h"
#include "optcoll/plan/rules_export.h"

namespace optcoll {
namespace {

using nlohmann::json;
constexpr std::string_view kDocument = "library timings";
constexpr std::string_view kFormat = "optcoll-library-timings-1";

MpiLibrary parse_library(const std::string& name) {
  if (name == "openmpi") return MpiLibrary::kOpenMpi;
  if (name == "mpich") return MpiLibrary::kMpich;
  json_fields::bad_entry(kDocument, "the file",
                         fmt::format("unknown library \"{}\" (known: openmpi, mpich)", name));
}

// The library's entry for `kind` called `name` with this id (Open MPI: its coll/tuned id;
// MPICH: 0), or Open MPI's own decision ("default", id 0).
const LibraryAlgorithm& find_algorithm(MpiLibrary library, CollectiveKind kind,
                                       const std::string& name, std::uint64_t id,
                                       const std::string& where) {
  if (library == MpiLibrary::kOpenMpi && name == kLibraryDefaultName && id == 0) {
    return open_mpi_default(kind);
  }
  const auto table = library_algorithms();
  const auto it = std::find_if(table.begin(), table.end(), [&](const LibraryAlgorithm& a) {
    return a.library == library && a.kind == kind && a.name == name &&
           static_cast<std::uint64_t>(a.id) == id;
  });
  if (it == table.end()) {
    json_fields::bad_entry(kDocument, where,
                           fmt::format("{} has no {} algorithm \"{}\" with id {} (optcoll "
                                       "export --list names them)",
                                       library_name(library), collective_name(kind), name, id));
  }
  return *it;
}

LibraryTimingPoint parse_point(const json& doc, MpiLibrary library, std::size_t index) {
  const std::string where = fmt::format("point {}", index);
  LibraryTimingPoint point;
  const std::string collective = json_fields::text_field(doc, "collective", kDocument, where);
  const auto kind = parse_collective(collective);
  if (!kind) {
    json_fields::bad_entry(kDocument, where, fmt::format("unknown collective \"{}\"", collective));
  }
  point.kind = *kind;
  point.bytes = json_fields::count_field(doc, "bytes", kDocument, where);
  const json& runs = json_fields::field(doc, "runs", kDocument, where);
  if (!runs.is_array()) json_fields::bad_entry(kDocument, where, "\"runs\" must be an array");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string run_where = fmt::format("{}, run {}", where, i);
    const std::string name = json_fields::text_field(runs[i], "algorithm", kDocument, run_where);
    const std::uint64_t id = json_fields::count_field(runs[i], "id", kDocument, run_where);
    point.runs.push_back(
        {&find_algorithm(library, point.kind, name, id, run_where),
         json_fields::seconds_field(runs[i], "seconds", kDocument, run_where, false)});
  }
  return point;
}

}  // namespace

const LibraryAlgorithm& open_mpi_default(CollectiveKind kind) {
  static const auto defaults = [] {
    std::array<LibraryAlgorithm, std::size(kCollectiveKinds)> out{};
    for (std::size_t k = 0; k < out.size(); ++k) {
      out[k] = LibraryAlgorithm{MpiLibrary::kOpenMpi,
                                static_cast<CollectiveKind>(k),
                                0,
                                kLibraryDefaultName,
                                "-",
                                "",
                                LibraryParam::kNone,
                                kNoRestriction,
                                Fidelity::kSame,
                                "Open MPI's own decision (coll/tuned's "
                                "fixed rules): algorithm 0 in a rule"};
    }
    return out;
  }();
  return defaults[static_cast<std::size_t>(kind)];
}

LibraryTimings parse_library_timings_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kParse, fmt::format("library timings are not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) throw Error(ErrorCode::kParse, "library timings must be a JSON object");
  const std::string format = json_fields::text_field(doc, "format", kDocument, "the file");
  if (format != kFormat) {
    json_fields::bad_entry(kDocument, "the file",
                           fmt::format("format \"{}\" is not \"{}\"", format, kFormat));
  }
  LibraryTimings timings;
  timings.library = parse_library(json_fields::text_field(doc, "library", kDocument, "the file"));
  const std::uint64_t nranks = json_fields::count_field(doc, "nranks", kDocument, "the file");
  if (nranks < 2 || nranks > (std::uint64_t{1} << 24)) {
    json_fields::bad_entry(kDocument, "the file",
                           fmt::format("nranks {}: timings are for 2 ranks or more", nranks));
  }
  timings.nranks = static_cast<Rank>(nranks);
  timings.source =
      doc.contains("source") ? json_fields::text_field(doc, "source", kDocument, "the file") : "";
  const json& points = json_fields::field(doc, "points", kDocument, "the file");
  if (!points.is_array())
    json_fields::bad_entry(kDocument, "the file", "\"points\" must be an array");
  for (std::size_t i = 0; i < points.size(); ++i) {
    timings.points.push_back(parse_point(points[i], timings.library, i));
  }
  return timings;
}

}  // namespace optcoll
