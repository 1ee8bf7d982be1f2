// SPDX-License-Identifier: Apache-2.0
// File: cost model arithmetic, validation, JSON model files and lower bounds.
#include "optcoll/model/cost_model.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"

namespace optcoll {
namespace {

void check_parameter(std::string_view name, double value) {
  if (std::isnan(value)) throw_invalid("model parameter {} is NaN", name);
  if (std::isinf(value)) throw_invalid("model parameter {} is infinite", name);
  if (value < 0) throw_invalid("model parameter {} is negative ({})", name, value);
}

std::size_t pair_index(const CostModel& model, Rank from, Rank to) {
  return static_cast<std::size_t>(from) * static_cast<std::size_t>(model.pair_nranks) +
         static_cast<std::size_t>(to);
}

// Smallest t with (k+1)^t >= n: rounds for one rank's data to reach n ranks with k ports.
int spread_rounds(Count n, int ports) {
  int rounds = 0;
  Count reached = 1;
  while (reached < n) {
    reached *= (ports + 1);
    ++rounds;
  }
  return rounds;
}

std::vector<std::vector<double>> read_matrix(const nlohmann::json& value, std::string_view name) {
  if (!value.is_array())
    throw Error(ErrorCode::kParse, fmt::format("model: {} must be an array of rows", name));
  std::vector<std::vector<double>> rows;
  for (const auto& row : value) {
    if (!row.is_array())
      throw Error(ErrorCode::kParse, fmt::format("model: {} must be an array of rows", name));
    std::vector<double> values;
    for (const auto& cell : row) {
      if (!cell.is_number())
        throw Error(ErrorCode::kParse, fmt::format("model: {} holds a non-number", name));
      values.push_back(cell.get<double>());
    }
    rows.push_back(std::move(values));
  }
  return rows;
}

}  // namespace

namespace {

// ---- the field table (cost_model_fields.def) as data, and a visit of a model's members

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

enum FieldIndex : std::size_t {
#define OPTCOLL_MODEL_FIELD(type, name, initial, kind, min, max, unit, help) kField_##name,
#include "optcoll/model/cost_model_fields.def"
#undef OPTCOLL_MODEL_FIELD
  kFieldCount
};

constexpr std::array<ModelFieldInfo, kFieldCount> kFields{{
#define OPTCOLL_MODEL_FIELD(type, name, initial, kind, min, max, unit, help) \
  {#name, ModelFieldKind::kind, min, max, unit, help, is_optional<type>::value},
#include "optcoll/model/cost_model_fields.def"
#undef OPTCOLL_MODEL_FIELD
}};

// Calls visit(info, member) for every scalar field of `model`, in table order.
template <typename Model, typename Visit>
void visit_fields(Model& model, Visit&& visit) {
#define OPTCOLL_MODEL_FIELD(type, name, initial, kind, min, max, unit, help) \
  visit(kFields[kField_##name], model.name);
#include "optcoll/model/cost_model_fields.def"
#undef OPTCOLL_MODEL_FIELD
}

template <typename Enum, std::size_t N>
std::string choice_list(const std::array<std::pair<std::string_view, Enum>, N>& names) {
  std::string list;
  for (const auto& [word, value] : names) {
    list += list.empty() ? "" : ", ";
    list += fmt::format("\"{}\"", word);
  }
  return list;
}

template <typename Enum>
const auto& choice_names() {
  if constexpr (std::is_same_v<Enum, Duplex>) {
    return kDuplexNames;
  } else {
    static_assert(std::is_same_v<Enum, SendMode>, "a kChoice field needs its names here");
    return kSendModeNames;
  }
}

template <typename Enum>
std::string_view choice_word(Enum value) {
  for (const auto& [word, v] : choice_names<Enum>()) {
    if (v == value) return word;
  }
  return "?";
}

// A field's value from JSON. `key` names it in messages; `where` is "model" (a file) or
// "model parameter" (an option).
template <typename T>
T read_value(const ModelFieldInfo& info, const nlohmann::json& value) {
  const std::string_view key = info.name;
  if constexpr (std::is_same_v<T, Time>) {
    if (!value.is_number())
      throw Error(ErrorCode::kParse, fmt::format("model: {} must be a number", key));
    return value.get<double>();
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!value.is_boolean()) {
      throw Error(ErrorCode::kParse, fmt::format("model: {} must be true or false", key));
    }
    return value.get<bool>();
  } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::size_t>) {
    if (!value.is_number_integer()) {
      throw Error(ErrorCode::kParse, fmt::format("model: {} must be an integer", key));
    }
    const auto number = value.get<std::int64_t>();
    const bool unbounded = info.kind == ModelFieldKind::kBytes && info.max == 0;
    if (number < info.min || (!unbounded && static_cast<double>(number) > info.max)) {
      if (unbounded) {
        throw_invalid("model parameter {} must be >= {}, got {}", key, info.min, number);
      }
      throw_invalid("model parameter {} must be in {}..{}, got {}", key, info.min, info.max,
                    number);
    }
    return static_cast<T>(number);
  } else {
    const std::string word = value.is_string() ? value.get<std::string>() : "";
    for (const auto& [name, choice] : choice_names<T>()) {
      if (name == word) return choice;
    }
    throw Error(ErrorCode::kParse,
                fmt::format("model: {} must be one of {}", key, choice_list(choice_names<T>())));
  }
}

template <typename T>
nlohmann::json write_value(const T& value) {
  if constexpr (std::is_same_v<T, Duplex> || std::is_same_v<T, SendMode>) {
    return std::string(choice_word(value));
  } else {
    return value;
  }
}

template <typename T>
void set_member(const ModelFieldInfo& info, T& member, const nlohmann::json& value) {
  if constexpr (is_optional<T>::value) {
    member = read_value<typename T::value_type>(info, value);
  } else {
    member = read_value<T>(info, value);
  }
}

// The range checks of validate() for one member (a number's NaN, infinity and sign; an
// integer's range).
template <typename T>
void check_member(const ModelFieldInfo& info, const T& member) {
  if constexpr (is_optional<T>::value) {
    if (member) check_member(info, *member);
  } else if constexpr (std::is_same_v<T, Time>) {
    check_parameter(info.name, member);
  } else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::size_t>) {
    const auto value = static_cast<double>(member);
    const bool unbounded = info.kind == ModelFieldKind::kBytes && info.max == 0;
    if (value < info.min || (!unbounded && value > info.max)) {
      throw_invalid("model parameter {} must be in {}..{}, got {}", info.name, info.min, info.max,
                    member);
    }
  }
}

// Reads an option's text as the JSON value of the field's kind.
nlohmann::json json_of_text(const ModelFieldInfo& info, std::string_view text) {
  const std::string word(text);
  switch (info.kind) {
    case ModelFieldKind::kChoice:
      return word;
    case ModelFieldKind::kFlag:
      if (word == "true" || word == "1") return true;
      if (word == "false" || word == "0") return false;
      break;
    case ModelFieldKind::kTime: {
      // strtod, not JSON: "nan" and "inf" read, so that validation names them.
      char* end = nullptr;
      const double number = std::strtod(word.c_str(), &end);
      if (!word.empty() && end == word.c_str() + word.size()) return number;
      break;
    }
    case ModelFieldKind::kInteger:
    case ModelFieldKind::kBytes: {
      std::int64_t number = 0;
      const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), number);
      if (!word.empty() && error == std::errc() && end == word.data() + word.size()) return number;
      break;
    }
  }
  throw_invalid("model parameter {} must be {}, got '{}'", info.name,
                info.kind == ModelFieldKind::kFlag   ? "true or false"
                : info.kind == ModelFieldKind::kTime ? "a number"
                                                     : "an integer",
                text);
}

}  // namespace

std::span<const ModelFieldInfo> model_fields() { return kFields; }

const ModelFieldInfo* find_model_field(std::string_view name) {
  for (const auto& info : kFields) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

void set_model_field(CostModel& model, std::string_view name, std::string_view text) {
  const ModelFieldInfo* field = find_model_field(name);
  if (field == nullptr) throw_invalid("model: unknown field \"{}\"", name);
  const nlohmann::json value = json_of_text(*field, text);
  bool done = false;
  visit_fields(model, [&](const ModelFieldInfo& info, auto& member) {
    if (&info != field) return;
    set_member(info, member, value);
    check_member(info, member);
    done = true;
  });
  OPTCOLL_CHECK(done, "model field {} is in the table but not visited", name);
}

std::string model_fields_table() {
  const CostModel unit;
  std::string text =
      "| field | kind | unit | range | default (unit model) | meaning |\n"
      "|---|---|---|---|---|---|\n";
  visit_fields(unit, [&](const ModelFieldInfo& info, const auto& member) {
    using T = std::decay_t<decltype(member)>;
    std::string initial;
    if constexpr (is_optional<T>::value) {
      initial = member ? write_value(*member).dump() : "unset";
    } else {
      initial = write_value(member).dump();
    }
    static constexpr std::array<std::string_view, 5> kKinds{"time", "integer", "bytes", "flag",
                                                            "choice"};
    std::string range = "-";
    if (info.kind == ModelFieldKind::kTime) range = ">= 0";
    if (info.kind == ModelFieldKind::kInteger) range = fmt::format("{}..{}", info.min, info.max);
    if (info.kind == ModelFieldKind::kBytes) range = fmt::format(">= {}", info.min);
    text += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", info.name,
                        kKinds[static_cast<std::size_t>(info.kind)], info.unit, range, initial,
                        info.help);
  });
  return text;
}

Time CostModel::latency(Rank from, Rank to) const {
  if (placement) return placement->same_node(from, to) ? alpha : node_latency();
  return has_pair_matrices() ? pair_alpha[pair_index(*this, from, to)] : alpha;
}

Time CostModel::per_unit(Rank from, Rank to) const {
  if (placement) return placement->same_node(from, to) ? beta : node_per_unit();
  return has_pair_matrices() ? pair_beta[pair_index(*this, from, to)] : beta;
}

double CostModel::units(Count count, std::size_t elem_bytes) const {
  const double elements = static_cast<double>(count);
  return per_byte ? elements * static_cast<double>(elem_bytes) : elements;
}

Time CostModel::per_unit(Rank from, Rank to, std::size_t bytes) const {
  if (rendezvous_beta && handshake_time(from, to, bytes) > 0 &&
      (!placement || placement->same_node(from, to))) {
    return *rendezvous_beta;
  }
  return per_unit(from, to);
}

Time CostModel::handshake_time(Rank from, Rank to, std::size_t bytes) const {
  if (!rendezvous_bytes || bytes <= *rendezvous_bytes) return 0;
  const bool same_node = !placement || placement->same_node(from, to);
  if (same_node && rendezvous_max_bytes && bytes >= *rendezvous_max_bytes) return 0;
  return rendezvous_alpha;
}

Time CostModel::transfer_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const {
  if (count == 0) return 0;
  const auto bytes = static_cast<std::size_t>(count) * elem_bytes;
  return latency(from, to) + handshake_time(from, to, bytes) +
         per_unit(from, to, bytes) * units(count, elem_bytes);
}

namespace {
// How long a transfer holds a port at the end with gap `gap`: gap + beta*m, at most all of it.
Time port_time(const CostModel& model, const std::optional<Time>& gap, Rank from, Rank to,
               Count count, std::size_t elem_bytes) {
  const Time whole = model.transfer_time(from, to, count, elem_bytes);
  if (!gap || count == 0) return whole;
  const auto bytes = static_cast<std::size_t>(count) * elem_bytes;
  return std::min(whole, *gap + model.per_unit(from, to, bytes) * model.units(count, elem_bytes));
}
}  // namespace

Time CostModel::send_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const {
  if (count > 0 &&
      send_mode_for(static_cast<std::size_t>(count) * elem_bytes) == SendMode::kReceiver) {
    // The receiver copies: the sender only posts the send (its gap, if the model has one).
    return std::min(transfer_time(from, to, count, elem_bytes), send_gap.value_or(0.0));
  }
  return port_time(*this, send_gap, from, to, count, elem_bytes);
}

Time CostModel::receive_port_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const {
  return port_time(*this, receive_gap, from, to, count, elem_bytes);
}

Time CostModel::least_transfer_time(Rank from, Rank to, Count count, std::size_t elem_bytes) const {
  if (count == 0) return 0;
  const auto bytes = static_cast<std::size_t>(count) * elem_bytes;
  Time per = per_unit(from, to, bytes);
  if (combines_in_place) per = std::min(per, gamma);
  if (may_be_helped(bytes)) per /= 2;
  return latency(from, to) + handshake_time(from, to, bytes) + per * units(count, elem_bytes);
}

Time CostModel::copy_time(Count count, std::size_t elem_bytes) const {
  return copy * units(count, elem_bytes);
}

Time CostModel::reduce_time(Count count, std::size_t elem_bytes) const {
  return gamma * units(count, elem_bytes);
}

namespace {
// The fields that only mean something with a placement, without one: an error where the
// model prices a call (validate_for); a model file may hold them for the MPI backend, which
// gives the model the placement it discovers (place_on).
void check_no_stray_inter_fields(const CostModel& model) {
  if (model.placement) return;
  const char* stray = model.inter_alpha      ? "inter_alpha"
                      : model.inter_beta     ? "inter_beta"
                      : model.nic_ports != 1 ? "nic_ports"
                                             : nullptr;
  if (stray != nullptr) {
    throw_invalid(
        "model parameter {} prices messages between nodes, but the model has no placement "
        "(give one: --placement NxM or @FILE, or \"placement\" in the model file; the MPI "
        "backend gives it the placement it discovers)",
        stray);
  }
}

// The placement, and what it cannot be combined with.
void validate_placement_fields(const CostModel& model) {
  if (!model.placement) return;
  validate(*model.placement);
  // cores combines with it: the processors of the whole job, whatever node each rank is on.
  const char* conflict = model.has_pair_matrices() ? "pair matrices"
                         : model.topology          ? "a topology"
                         : model.node_beta         ? "node_beta"
                                                   : nullptr;
  if (conflict != nullptr) {
    throw_invalid(
        "model placement {} cannot be combined with {} (the placement prices pairs by node; "
        "node_beta describes one node's memory)",
        to_string(*model.placement), conflict);
  }
}
}  // namespace

void validate(const CostModel& model) {
  visit_fields(model,
               [](const ModelFieldInfo& info, const auto& member) { check_member(info, member); });
  if (model.stretches_clock() && model.topology) {
    throw_invalid(
        "model parameter {} describes processors or memory that all ranks share; it cannot be "
        "combined with a topology (whose ranks each have their own)",
        model.cores ? "cores" : "node_beta");
  }
  if (model.pair_nranks < 0) throw_invalid("model pair matrices have negative size");
  const auto cells =
      static_cast<std::size_t>(model.pair_nranks) * static_cast<std::size_t>(model.pair_nranks);
  if (model.pair_alpha.size() != cells || model.pair_beta.size() != cells) {
    throw_invalid("model pair matrices must both be {} x {} ({} cells), got {} and {}",
                  model.pair_nranks, model.pair_nranks, cells, model.pair_alpha.size(),
                  model.pair_beta.size());
  }
  for (std::size_t i = 0; i < cells; ++i) {
    const auto from = i / static_cast<std::size_t>(model.pair_nranks);
    const auto to = i % static_cast<std::size_t>(model.pair_nranks);
    check_parameter(fmt::format("pair_alpha[{}][{}]", from, to), model.pair_alpha[i]);
    check_parameter(fmt::format("pair_beta[{}][{}]", from, to), model.pair_beta[i]);
  }
  if (model.topology) validate(*model.topology);
  validate_placement_fields(model);
  if (model.rendezvous_beta && !model.rendezvous_bytes) {
    throw_invalid(
        "model parameter rendezvous_beta needs rendezvous_bytes: it is the rate of the messages "
        "that wait for the handshake, and without rendezvous_bytes none does");
  }
  if (model.rendezvous_bytes && model.rendezvous_max_bytes &&
      *model.rendezvous_max_bytes <= *model.rendezvous_bytes) {
    throw_invalid(
        "model parameter rendezvous_max_bytes ({}) must exceed rendezvous_bytes ({}): no "
        "message would wait for the handshake",
        *model.rendezvous_max_bytes, *model.rendezvous_bytes);
  }
}

CostModel place_on(CostModel model, const std::optional<Placement>& discovered) {
  if (!discovered) return model;
  if (model.placement) {
    if (model.placement->nranks() != discovered->nranks()) {
      throw_invalid("model placement {} has {} ranks but the ranks run on {} ({} ranks)",
                    to_string(*model.placement), model.placement->nranks(), to_string(*discovered),
                    discovered->nranks());
    }
    for (Rank r = 0; r < discovered->nranks(); ++r) {
      const auto i = static_cast<std::size_t>(r);
      if (model.placement->node_of[i] != discovered->node_of[i]) {
        throw_invalid(
            "model placement {} differs from where the ranks run ({}): rank {} is on node {}, "
            "the model says node {}",
            to_string(*model.placement), to_string(*discovered), r, discovered->node_of[i],
            model.placement->node_of[i]);
      }
    }
    return model;
  }
  if (model.inter_alpha || model.inter_beta || model.nic_ports != 1) {
    model.placement = discovered;
    validate(model);
  }
  return model;
}

CostModel with_topology(CostModel model, Topology topology) {
  validate(topology);
  model.ports = 2 * topology.ndims();
  model.duplex = topology.links == LinkMode::kBidirectional ? Duplex::kFull : Duplex::kHalf;
  model.overlap = true;
  model.topology = std::move(topology);
  return model;
}

void validate_for(const CostModel& model, Rank nranks) {
  validate(model);
  check_no_stray_inter_fields(model);
  if (model.topology && model.topology->size() != nranks) {
    throw_invalid("model topology {} has {} nodes but the collective has {} ranks",
                  to_string(*model.topology), model.topology->size(), nranks);
  }
  if (model.placement) validate_for(*model.placement, nranks);
  if (model.has_pair_matrices() && model.pair_nranks != nranks) {
    throw_invalid("model pair matrices are {} x {} but the collective has {} ranks",
                  model.pair_nranks, model.pair_nranks, nranks);
  }
}

namespace {
// "placement": "NxM", "0,0,1,1" or [0, 0, 1, 1].
Placement read_placement(const nlohmann::json& value) {
  if (value.is_string()) return parse_placement(value.get<std::string>());
  if (!value.is_array()) {
    throw Error(ErrorCode::kParse,
                "model: placement must be a string (\"4x16\") or an array of node ids");
  }
  Placement placement;
  for (std::size_t r = 0; r < value.size(); ++r) {
    const auto& id = value[r];
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 ||
        id.get<std::int64_t>() > std::numeric_limits<std::int32_t>::max()) {
      throw Error(ErrorCode::kParse,
                  fmt::format("model: placement entry {} (rank {}) is {}, not a node id (a "
                              "whole number >= 0)",
                              r, r, id.dump()));
    }
    placement.node_of.push_back(static_cast<std::int32_t>(id.get<std::int64_t>()));
  }
  validate(placement);
  return placement;
}
}  // namespace

namespace {

// The MPI backend's same-node channel threshold by default (MpiTransport::Options).
constexpr std::size_t kMpiChannelMinBytes = std::size_t{16} << 10;

// The model a file starts from: its "base" ("unit", "reference", "threads" or "mpi"), else
// `base`.
CostModel base_model(const nlohmann::json& doc, const CostModel& base) {
  const auto it = doc.find("base");
  if (it == doc.end()) return base;
  const std::string name = it->is_string() ? it->get<std::string>() : "";
  if (name == "unit") return CostModel{};
  if (name == "reference") return reference_cluster_model();
  if (name == "threads") return thread_node_model(std::nullopt);
  if (name == "mpi") return mpi_node_model(std::nullopt, kMpiChannelMinBytes);
  throw Error(ErrorCode::kParse,
              "model: base must be \"unit\", \"reference\", \"threads\" or \"mpi\"");
}

// A file's pair_alpha and pair_beta rows (both or neither, square, the same size), flattened
// into the model.
void set_pair_matrices(CostModel& model, const std::vector<std::vector<double>>& pair_alpha,
                       const std::vector<std::vector<double>>& pair_beta) {
  if (pair_alpha.empty() != pair_beta.empty()) {
    throw_invalid("model: pair_alpha and pair_beta must be given together");
  }
  if (!pair_alpha.empty()) {
    const std::size_t n = pair_alpha.size();
    for (const auto* matrix : {&pair_alpha, &pair_beta}) {
      if (matrix->size() != n) throw_invalid("model: pair_alpha and pair_beta differ in size");
      for (const auto& row : *matrix) {
        if (row.size() != n)
          throw_invalid("model: pair matrices must be square ({} rows, a row of {})", n,
                        row.size());
      }
    }
    model.pair_nranks = static_cast<Rank>(n);
    for (std::size_t i = 0; i < n; ++i) {
      model.pair_alpha.insert(model.pair_alpha.end(), pair_alpha[i].begin(), pair_alpha[i].end());
      model.pair_beta.insert(model.pair_beta.end(), pair_beta[i].begin(), pair_beta[i].end());
    }
  }
}

}  // namespace

CostModel parse_cost_model_json(std::string_view text, const CostModel& base) {
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorCode::kParse, fmt::format("model file is not valid JSON: {}", e.what()));
  }
  if (!doc.is_object()) throw Error(ErrorCode::kParse, "model file must hold a JSON object");
  CostModel model = base_model(doc, base);
  std::vector<std::vector<double>> pair_alpha;
  std::vector<std::vector<double>> pair_beta;
  std::optional<std::size_t> old_shared_sends;  // "shared_send_min_bytes", the old name
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    const auto& value = item.value();
    if (const ModelFieldInfo* field = find_model_field(key)) {
      visit_fields(model, [&](const ModelFieldInfo& info, auto& member) {
        if (&info == field) set_member(info, member, value);
      });
    } else if (key == "pair_alpha") {
      pair_alpha = read_matrix(value, key);
    } else if (key == "pair_beta") {
      pair_beta = read_matrix(value, key);
    } else if (key == "topology") {
      if (!value.is_string()) throw Error(ErrorCode::kParse, "model: topology must be a string");
      model.topology = parse_topology(value.get<std::string>());
    } else if (key == "placement") {
      model.placement = read_placement(value);
    } else if (key == "shared_send_min_bytes") {
      ModelFieldInfo old_name = *find_model_field("send_mode_min_bytes");
      old_name.name = key;
      old_shared_sends = read_value<std::size_t>(old_name, value);
    } else if (key == "calibrated_ranks") {
      // Provenance written by `optcoll calibrate` (the ranks it ran with; `optcoll bench`
      // notes a different count): checked, not part of the cost model.
      if (!value.is_number_integer() || value.get<std::int64_t>() < 1) {
        throw Error(ErrorCode::kParse, "model: calibrated_ranks must be a positive integer");
      }
    } else if (key == "comment" || key == "source" || key == "base") {
      // Free-text provenance, e.g. written by `optcoll calibrate` (and the base, read above).
    } else {
      throw Error(ErrorCode::kParse, fmt::format("model: unknown field \"{}\"", key));
    }
  }
  if (old_shared_sends) {
    if (doc.contains("send_mode") || doc.contains("send_mode_min_bytes")) {
      throw_invalid(
          "model: shared_send_min_bytes (the old name of send_mode \"shared\" with "
          "send_mode_min_bytes) cannot be combined with send_mode or send_mode_min_bytes");
    }
    model.send_mode = SendMode::kShared;
    model.send_mode_min_bytes = *old_shared_sends;
  }
  set_pair_matrices(model, pair_alpha, pair_beta);
  validate(model);
  return model;
}

std::string cost_model_to_json(const CostModel& model) {
  nlohmann::json doc = nlohmann::json::object();
  visit_fields(model, [&](const ModelFieldInfo& info, const auto& member) {
    using T = std::decay_t<decltype(member)>;
    if constexpr (is_optional<T>::value) {
      if (member) doc[std::string(info.name)] = write_value(*member);
    } else {
      doc[std::string(info.name)] = write_value(member);
    }
  });
  if (model.has_pair_matrices()) {
    const auto n = static_cast<std::size_t>(model.pair_nranks);
    nlohmann::json alpha = nlohmann::json::array();
    nlohmann::json beta = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) {
      alpha.push_back(
          std::vector<double>(model.pair_alpha.begin() + static_cast<std::ptrdiff_t>(i * n),
                              model.pair_alpha.begin() + static_cast<std::ptrdiff_t>((i + 1) * n)));
      beta.push_back(
          std::vector<double>(model.pair_beta.begin() + static_cast<std::ptrdiff_t>(i * n),
                              model.pair_beta.begin() + static_cast<std::ptrdiff_t>((i + 1) * n)));
    }
    doc["pair_alpha"] = alpha;
    doc["pair_beta"] = beta;
  }
  if (model.topology) doc["topology"] = to_string(*model.topology);
  if (model.placement) doc["placement"] = to_string(*model.placement);
  return doc.dump(2);
}

std::string model_units(const CostModel& model) {
  return model.per_byte ? "per byte, times in seconds" : "per element, times in abstract units";
}

std::string format_time(Time t, const CostModel& model) {
  if (!model.per_byte) return fmt::format("{:.6g}", t);
  const double magnitude = std::abs(t);
  if (magnitude == 0) return "0 s";
  if (magnitude < 1e-6) return fmt::format("{:.4g} ns", t * 1e9);
  if (magnitude < 1e-3) return fmt::format("{:.4g} us", t * 1e6);
  if (magnitude < 1) return fmt::format("{:.4g} ms", t * 1e3);
  return fmt::format("{:.4g} s", t);
}

CostModel reference_cluster_model() {
  CostModel model;
  model.alpha = 2e-6;
  model.beta = 1e-10;
  model.gamma = 1e-10;
  model.copy = 5e-11;
  model.ports = 1;
  model.duplex = Duplex::kFull;
  model.overlap = false;
  model.per_byte = true;
  return model;
}

namespace {

// One calibration's numbers of a node (per byte, seconds): what the two backends' defaults
// differ in besides their fields.
struct NodeNumbers {
  Time alpha = 0;
  Time gap = 0;  // the send gap and the receive gap alike
  Time beta = 0;
  Time gamma = 0;
  Time copy = 0;
  Time node_beta = 0;
};

// A node's model from its numbers: per byte, one port, full duplex, no overlap (CostModel's
// defaults), copies folded into the reductions they feed (both executors do), `cores`.
CostModel node_model(const NodeNumbers& n, std::optional<int> cores) {
  CostModel model;
  model.per_byte = true;
  model.alpha = n.alpha;
  model.send_gap = n.gap;
  model.receive_gap = n.gap;
  model.beta = n.beta;
  model.gamma = n.gamma;
  model.copy = n.copy;
  model.node_beta = n.node_beta;
  model.folds_copies = true;
  model.cores = cores;
  return model;
}

}  // namespace

CostModel thread_node_model(std::optional<int> cores) {
  CostModel model = node_model({.alpha = 0.4e-6,
                                .gap = 0.16e-6,
                                .beta = 0.029e-9,
                                .gamma = 0.04e-9,
                                .copy = 0.021e-9,
                                .node_beta = 0.011e-9},
                               cores);
  // Above the eager size the rank that posts second makes the copy, and an idle receiver
  // takes a large one over: a sender's messages to several ranks are copied by them at once
  // (calibrate at p = 4 on the project machine chose "receiver"; at p = 2 the two mostly
  // price alike).
  model.send_mode = SendMode::kReceiver;
  model.send_mode_min_bytes = 4097;
  model.combines_in_place = true;
  model.helped_bytes = std::size_t{256} << 10;
  return model;
}

CostModel mpi_node_model(std::optional<int> cores, std::optional<std::size_t> channel_min_bytes) {
  CostModel model = node_model({.alpha = 0.1e-6,
                                .gap = 0.06e-6,
                                .beta = 0.025e-9,
                                .gamma = 0.023e-9,
                                .copy = 0.028e-9,
                                .node_beta = 0.012e-9},
                               cores);
  // Above Open MPI's eager limit a message waits for the receiver (a handshake); the
  // channel's messages do not, and a sender's identical messages in progress share the one
  // copy into its arena (a linear bcast's root copies the buffer out once).
  model.rendezvous_bytes = 4032;
  model.rendezvous_alpha = 2e-6;
  // Past the handshake the library's messages take its single copy through the kernel, a
  // third of the channel's rate here (optcoll's own between the eager limit and the channel's
  // threshold, and every large one of the library's algorithms: the PMPI library's route).
  model.rendezvous_beta = 0.067e-9;
  if (channel_min_bytes) {
    model.rendezvous_max_bytes = *channel_min_bytes;
    model.send_mode = SendMode::kShared;
    model.send_mode_min_bytes = *channel_min_bytes;
  }
  return model;
}

namespace {

// Elements that must enter (`into`) or leave each node of `placement`: the data some rank's
// output needs from a rank on another node. A reduction's element combines inputs of other
// nodes, so at least one value per element index crosses into the node that needs it (and
// out of a node whose inputs another node needs), whatever is combined on the way.
namespace {

// The elements of the blocks that each node's ranks own.
std::vector<Count> blocks_per_node(const Layout& layout, const Placement& placement) {
  std::vector<Count> own(static_cast<std::size_t>(placement.nodes()), 0);
  for (Rank r = 0; r < layout.nranks(); ++r) {
    own[static_cast<std::size_t>(placement.node_of[static_cast<std::size_t>(r)])] +=
        layout.block(r);
  }
  return own;
}

// scan, exscan: rank x's output combines the inputs of the ranks before it (and its own): a
// node needs n from outside if a rank elsewhere comes before one of its ranks, and its inputs
// must leave it if one of its ranks comes before a rank elsewhere.
void add_scan_traffic(const Layout& layout, const Placement& placement, bool into,
                      std::vector<Count>& traffic) {
  const Rank p = layout.nranks();
  const Count n = layout.total();
  const auto node = [&](Rank r) { return placement.node_of[static_cast<std::size_t>(r)]; };
  const auto nodes = static_cast<std::int32_t>(traffic.size());
  std::vector<Rank> first(traffic.size(), p);
  std::vector<Rank> last(traffic.size(), -1);
  for (Rank r = 0; r < p; ++r) {
    const auto m = static_cast<std::size_t>(node(r));
    first[m] = std::min(first[m], r);
    last[m] = r;
  }
  for (std::int32_t m = 0; m < nodes && n > 0; ++m) {
    bool crosses = false;
    for (Rank r = 0; r < p && !crosses; ++r) {
      if (node(r) == m) continue;
      crosses =
          into ? r < last[static_cast<std::size_t>(m)] : first[static_cast<std::size_t>(m)] < r;
    }
    if (crosses) traffic[static_cast<std::size_t>(m)] = n;
  }
}

}  // namespace

std::vector<Count> node_traffic(const Layout& layout, const Placement& placement, bool into) {
  const auto& spec = layout.spec();
  const Rank p = layout.nranks();
  const auto node = [&](Rank r) { return placement.node_of[static_cast<std::size_t>(r)]; };
  const std::int32_t nodes = placement.nodes();
  std::vector<Count> traffic(static_cast<std::size_t>(nodes), 0);
  if (nodes < 2) return traffic;
  const auto at = [&](std::int32_t n) -> Count& { return traffic[static_cast<std::size_t>(n)]; };
  const Count n = layout.total();
  const std::int32_t root_node = is_rooted(spec.kind) ? node(layout.root()) : 0;
  switch (spec.kind) {
    case CollectiveKind::kBcast:
    case CollectiveKind::kReduce:
      // bcast: into every other node, out of the root's; reduce: the reverse.
      for (std::int32_t m = 0; m < nodes; ++m) {
        const bool root_side = m == root_node;
        if (n > 0 && root_side != (into == (spec.kind == CollectiveKind::kBcast))) at(m) = n;
      }
      break;
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv: {
      // The blocks of the ranks off the root's node cross between their node and the root's.
      const bool outwards =
          spec.kind == CollectiveKind::kScatter || spec.kind == CollectiveKind::kScatterv;
      for (Rank r = 0; r < p; ++r) {
        if (node(r) == root_node) continue;
        at(into == outwards ? node(r) : root_node) += layout.block(r);
      }
      break;
    }
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv: {
      const std::vector<Count> own = blocks_per_node(layout, placement);
      for (std::int32_t m = 0; m < nodes; ++m) {
        at(m) = into ? n - own[static_cast<std::size_t>(m)] : own[static_cast<std::size_t>(m)];
      }
      break;
    }
    case CollectiveKind::kAllreduce:
      for (std::int32_t m = 0; m < nodes; ++m) at(m) = n;
      break;
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock: {
      // Into a node: its ranks' blocks; out of it: every other node's blocks.
      const std::vector<Count> own = blocks_per_node(layout, placement);
      for (std::int32_t m = 0; m < nodes; ++m) {
        at(m) = into ? own[static_cast<std::size_t>(m)] : n - own[static_cast<std::size_t>(m)];
      }
      break;
    }
    case CollectiveKind::kScan:
    case CollectiveKind::kExscan:
      add_scan_traffic(layout, placement, into, traffic);
      break;
    case CollectiveKind::kAlltoall:
      for (Rank a = 0; a < p; ++a) {
        for (Rank b = 0; b < p; ++b) {
          if (node(a) == node(b)) continue;
          at(into ? node(b) : node(a)) += layout.pair_count(a, b);
        }
      }
      break;
    case CollectiveKind::kAlltoallv:  // (one rank's row and column: 2p - 1 pairs)
      for_each_alltoallv_pair(spec, [&](Rank a, Rank b, Count m) {
        if (node(a) != node(b)) at(into ? node(b) : node(a)) += m;
      });
      break;
    case CollectiveKind::kBarrier:
      break;
  }
  return traffic;
}

// With a placement: the bounds of the homogeneous model whose alpha and beta are the cheaper
// of the two levels (every transfer costs at least that), and the NIC bound: the m elements
// that must enter (or leave) a node go through its nic_ports channels, each transfer holding
// one for at least inter_alpha + inter_beta * m', so the last ends no sooner than
// inter_alpha + inter_beta * m / nic_ports.
std::optional<Time> placement_lower_bound(const Layout& layout, const CostModel& model) {
  CostModel flat = model;
  flat.placement.reset();
  flat.alpha = std::min(model.alpha, model.node_latency());
  flat.beta = std::min(model.beta, model.node_per_unit());
  flat.inter_alpha.reset();
  flat.inter_beta.reset();
  flat.nic_ports = 1;
  const std::optional<Time> levels = lower_bound(layout, flat);
  double nic = 0;
  for (const bool into : {true, false}) {
    for (const Count m : node_traffic(layout, *model.placement, into)) {
      if (m == 0) continue;
      nic = std::max(nic, model.node_latency() + model.node_per_unit() *
                                                     model.units(m, layout.spec().elem_bytes) /
                                                     model.nic_ports);
    }
  }
  return std::max(levels.value_or(0.0), nic);
}

}  // namespace

namespace {

// What a call must move, per rank: the elements it must receive, how many other ranks' data
// it depends on, and the elements that must leave it (some other rank's output needs them).
struct DataNeeds {
  std::vector<Count> missing;
  std::vector<Count> sources;
  std::vector<Count> outgoing;
};

// Per rank: the elements it must receive and the ranks whose data they come from.
void add_received(const Layout& layout, DataNeeds& needs) {
  const Rank p = layout.nranks();
  const auto& spec = layout.spec();
  const auto root = static_cast<std::size_t>(layout.root());
  if (spec.kind == CollectiveKind::kAlltoallv) {  // over the pairs that may carry data
    for_each_alltoallv_pair(spec, [&](Rank from, Rank to, Count m) {
      if (from == to || m == 0) return;
      needs.missing[static_cast<std::size_t>(to)] += m;
      needs.sources[static_cast<std::size_t>(to)] += 1;
    });
    return;
  }
  Count nonempty_blocks = 0;
  for (Rank q = 0; q < p; ++q) nonempty_blocks += layout.block(q) > 0 ? 1 : 0;
  for (Rank r = 0; r < p; ++r) {
    const auto i = static_cast<std::size_t>(r);
    switch (spec.kind) {
      case CollectiveKind::kBcast:
      case CollectiveKind::kScatter:
      case CollectiveKind::kScatterv:
        needs.missing[i] = i == root ? 0 : layout.output_count(r);
        needs.sources[i] = needs.missing[i] > 0 ? 1 : 0;
        break;
      case CollectiveKind::kGather:
      case CollectiveKind::kGatherv:
      case CollectiveKind::kAllgather:
      case CollectiveKind::kAllgatherv:
        if (layout.output_count(r) == 0) break;
        needs.missing[i] = layout.total() - layout.block(r);
        needs.sources[i] = nonempty_blocks - (layout.block(r) > 0 ? 1 : 0);
        break;
      case CollectiveKind::kReduce:
      case CollectiveKind::kAllreduce:
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kReduceScatterBlock:
        // Each output element combines all p inputs, so some of it must arrive from others.
        needs.missing[i] = p > 1 ? layout.output_count(r) : 0;
        needs.sources[i] = needs.missing[i] > 0 ? p - 1 : 0;
        break;
      case CollectiveKind::kScan:
      case CollectiveKind::kExscan:
        // Rank r's output combines the inputs of ranks 0..r-1 (and its own, for scan).
        needs.missing[i] = r > 0 ? layout.output_count(r) : 0;
        needs.sources[i] = needs.missing[i] > 0 ? r : 0;
        break;
      case CollectiveKind::kAlltoall:
      case CollectiveKind::kAlltoallv:  // (alltoallv: above)
        for (Rank q = 0; q < p; ++q) {
          if (q == r || layout.pair_count(q, r) == 0) continue;
          needs.missing[i] += layout.pair_count(q, r);
          needs.sources[i] += 1;
        }
        break;
      case CollectiveKind::kBarrier:
        break;
    }
  }
}

// Per rank: what must leave it, its part of the data that another rank's output needs.
void add_outgoing(const Layout& layout, DataNeeds& needs) {
  const Rank p = layout.nranks();
  const auto& spec = layout.spec();
  const auto root = static_cast<std::size_t>(layout.root());
  if (spec.kind == CollectiveKind::kAlltoallv) {  // over the pairs that may carry data
    if (p < 2) return;
    for_each_alltoallv_pair(spec, [&](Rank from, Rank to, Count m) {
      if (from != to) needs.outgoing[static_cast<std::size_t>(from)] += m;
    });
    return;
  }
  for (Rank r = 0; r < p && p > 1; ++r) {
    const auto i = static_cast<std::size_t>(r);
    switch (spec.kind) {
      case CollectiveKind::kBcast:
        needs.outgoing[i] = i == root ? layout.total() : 0;
        break;
      case CollectiveKind::kScatter:
      case CollectiveKind::kScatterv:
        needs.outgoing[i] = i == root ? layout.total() - layout.block(r) : 0;
        break;
      case CollectiveKind::kGather:
      case CollectiveKind::kGatherv:
        needs.outgoing[i] = i == root ? 0 : layout.block(r);
        break;
      case CollectiveKind::kAllgather:
      case CollectiveKind::kAllgatherv:
        needs.outgoing[i] = layout.block(r);
        break;
      case CollectiveKind::kReduce:
        needs.outgoing[i] = i == root ? 0 : layout.total();
        break;
      case CollectiveKind::kAllreduce:
        needs.outgoing[i] = layout.total();
        break;
      case CollectiveKind::kReduceScatter:
      case CollectiveKind::kReduceScatterBlock:
        needs.outgoing[i] = layout.total() - layout.block(r);
        break;
      case CollectiveKind::kScan:
      case CollectiveKind::kExscan:
        needs.outgoing[i] = r + 1 < p ? layout.total() : 0;
        break;
      case CollectiveKind::kAlltoall:
      case CollectiveKind::kAlltoallv:
        for (Rank q = 0; q < p; ++q) needs.outgoing[i] += q == r ? 0 : layout.pair_count(r, q);
        break;
      case CollectiveKind::kBarrier:
        break;
    }
  }
}

DataNeeds data_needs(const Layout& layout) {
  const auto ranks = static_cast<std::size_t>(layout.nranks());
  DataNeeds needs{std::vector<Count>(ranks, 0), std::vector<Count>(ranks, 0),
                  std::vector<Count>(ranks, 0)};
  add_received(layout, needs);
  add_outgoing(layout, needs);
  return needs;
}

// The reduction work spread over the ranks, and the reductions' transfers and work over all
// ranks together (both 0 for the other collectives); see the comments inside.
struct ReductionBounds {
  double reduction = 0;
  double aggregate = 0;
};
ReductionBounds reduction_bounds(const Layout& layout, const CostModel& model,
                                 bool fan_in_bounded) {
  const Rank p = layout.nranks();
  const auto& spec = layout.spec();
  const int k = model.ports;
  const double alpha = model.alpha;
  const auto units = [&](Count count) { return model.units(count, spec.elem_bytes); };
  // Reduction work (Chan et al.'s (p-1)/p·n·gamma): every element of the result needs p-1
  // binary combinations (exscan: p-2, for rank p-1's prefix), spread over at most p ranks of
  // cores_per_rank cores each (a rank's work takes at least its sum / cores_per_rank). It
  // holds for reduce as well: the root's n elements need them.
  const Count elements = is_reduction(spec.kind) ? layout.total() : 0;
  const Rank combinations = spec.kind == CollectiveKind::kExscan ? std::max(p - 2, 0) : p - 1;
  const double work = model.gamma * units(elements) * combinations / model.cores_per_rank;
  ReductionBounds bounds;
  bounds.reduction = work / p;
  // Transfers and reduction work over all ranks together (Chan et al.'s reduce-scatter
  // (p-1)/p·n·(beta + gamma) and allreduce 2(p-1)/p·n·beta + (p-1)/p·n·gamma): every element
  // index of a reduction travels in at least p-1 transfers (each rank whose input it needs
  // must send it on; allreduce: 2(p-1), the one-way gossip bound of Harary & Schwenk 1974,
  // since every rank must also learn it), so at least as many messages arrive. A receive
  // holds a receive port for alpha + beta*m (a receive gap: beta*m at least), k of them at
  // once; without overlap a rank's processor does nothing while it holds a port, so a rank's
  // port time / k and its reduction work add up, and the p ranks share the total. With
  // overlap computation may hide behind communication: the larger of the two only.
  if (elements > 0 && p > 1) {
    const Count hops = spec.kind == CollectiveKind::kAllreduce ? 2 * (p - 1) : p - 1;
    const double port = ((fan_in_bounded ? static_cast<double>(hops) * alpha : 0.0) +
                         static_cast<double>(hops) * model.beta * units(elements)) /
                        k;
    bounds.aggregate = model.overlap ? std::max(port, work) / p : (port + work) / p;
  }
  return bounds;
}

// Memory (node_beta): see the comment inside.
double memory_bound(const std::vector<Count>& missing, const CostModel& model,
                    std::size_t elem_bytes) {
  const auto units = [&](Count count) { return model.units(count, elem_bytes); };
  // Memory (node_beta): every missing element arrives by a transfer, at least one copy
  // through the node's memory system, which moves at most 1 / node_beta units per time unit
  // (with beta > 0 every transfer takes time, so its traffic is spread over it).
  Count total_missing = 0;
  for (const Count m : missing) total_missing += m;
  return model.node_beta && model.beta > 0
             ? *model.node_beta * kSingleCopyTransferTraffic * units(total_missing)
             : 0.0;
}

// The elements of rank r's own data that must appear in its own output (the root of gather
// and scatter, every rank of allgather, the diagonal of alltoall); 0 where a collective has
// none or where a reduction combines it (the reductions are bounded by their own terms).
Count own_block(const Layout& layout, Rank r) {
  switch (layout.kind()) {
    case CollectiveKind::kGather:
    case CollectiveKind::kGatherv:
    case CollectiveKind::kScatter:
    case CollectiveKind::kScatterv:
      return r == layout.root() ? layout.block(r) : 0;
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
      return layout.block(r);
    case CollectiveKind::kAlltoall:
    case CollectiveKind::kAlltoallv:
      return layout.pair_count(r, r);
    default:
      return 0;
  }
}

// The own block at a rank (Träff's gather trees: the root's copy of its own block is part of
// every schedule's time, docs/math/gather-scatter-trees.md §7): the b elements of own_block
// reach the rank's output either by Copy ops (copy·b/cores_per_rank at best, on all its cores
// at once) or by being received (schedules cannot send to their own rank, so they travel
// away and back: beta·b/k more receive port time). Of the x elements copied, the rank also
// receives y = m + b - x (m: what it must receive anyway); its transfers in take at least
// T(y) = alpha + beta·y/k (as for the receive bound), of which the processor is held P(y):
// the same, or only beta·y/k with a receive gap (the port, and with it the processor, is
// released before the transfer's end). Without overlap computation and communication
// exclude each other, so the rank takes max(copy(x) + P(y), T(y)); with overlap
// max(copy(x), T(y)). Both pieces are linear in x while y > 0, so the least over x in
// [0, b] is at x = 0, x = b or where they cross.
double own_block_bound(const Layout& layout, const CostModel& model,
                       const std::vector<Count>& missing) {
  if (model.copy <= 0) return 0;  // (copies free: the receive bound is the same or more)
  const auto& spec = layout.spec();
  const double beta = model.beta / model.ports;
  const double copy = model.copy / model.cores_per_rank;
  const double unit = model.units(1, spec.elem_bytes);
  const double held_alpha = model.receive_gap ? 0.0 : model.alpha;
  double bound = 0;
  for (Rank r = 0; r < layout.nranks(); ++r) {
    const double b = static_cast<double>(own_block(layout, r)) * unit;
    if (b <= 0) continue;
    const double m = static_cast<double>(missing[static_cast<std::size_t>(r)]) * unit;
    const auto time = [&](double x) {  // x: the units copied
      const double y = m + b - x;
      const double transfers = y > 0 ? model.alpha + beta * y : 0.0;
      const double held = y > 0 ? held_alpha + beta * y : 0.0;
      return model.overlap ? std::max(copy * x, transfers) : std::max(copy * x + held, transfers);
    };
    // Crossing of the processor piece (slope copy - beta, or copy with overlap) and the
    // transfer piece (slope -beta) while y > 0.
    const double processor_slope = model.overlap ? copy : copy - beta;
    const double processor_at_0 = model.overlap ? 0.0 : held_alpha + beta * (m + b);
    const double transfers_at_0 = model.alpha + beta * (m + b);
    double least = std::min(time(0), time(b));
    if (processor_slope + beta > 0) {
      const double cross = (transfers_at_0 - processor_at_0) / (processor_slope + beta);
      least = std::min(least, time(std::clamp(cross, 0.0, b)));
    }
    bound = std::max(bound, least);
  }
  return bound;
}

}  // namespace

// lower_bound: the known bounds (Chan, Heimlich, Purkayastha & van de Geijn 2007, "Collective
// communication: theory, practice, and experience", Table 1; Bruck et al. 1997 for alltoall;
// Jain & Sabharwal for the torus links), each in the form that provably holds under the
// simulator's semantics (optcoll/sim/simulator.cc) for every setting of the model. Chan et
// al. give their table's latency, bandwidth and computation terms as separate lower bounds;
// they are summed below only where an argument in this model sums them. Notation: k ports,
// R(q) = ceil(log_{k+1} q) (spread_rounds), units() of elements. Every argument uses only
// that a transfer of m > 0 elements lasts at least alpha + beta*m and that the ports and the
// processor bound what runs at once; cores, node_beta, copies and links only add time, so
// the bounds without them hold with them.
namespace {

// Latency and bandwidth summed (Chan et al.'s ceil(log2 p)·alpha + n·beta for bcast and
// reduce, with k ports R(p)·alpha + n·beta/k), by the element that leaves last:
// - bcast (port sends without a send gap): let t* be the end of the root's first send of
//   the element e* whose first send ends last; t* >= alpha + n·beta/k (the first sends
//   carry all n elements through k ports). Before t* only the root holds e*, and the
//   holders of e* grow at most (k+1)-fold per alpha (a send holds its port throughout), so
//   reaching the other p-1 ranks takes R(p) - 1 more message times.
// - the reductions (any send mode, no receive gap), at each rank x that must receive m
//   elements each combining s other ranks' inputs: let s* be the latest start of a
//   transfer into x carrying the element e* whose last such start is earliest;
//   s* <= T - alpha - m·beta/k (those transfers carry all m elements through k receive
//   ports). After s* nothing of e* starts towards x, so x and the at most k senders in
//   progress at s* hold all s inputs then; a rank holds at most (k+1)^floor(t/alpha)
//   ranks' inputs at t, so s* >= (R(s+1) - 1)·alpha.
// Gather, allgather and scatter have no such element (each element comes from one rank):
// their sums do not follow from this argument, and for the v-variants they fail (scatterv
// with one large block: the root first sends the small blocks on, then the large one,
// and finishes at about max(R(p)·alpha, 2·alpha + n·beta)), so those keep the maximum.
double summed_bound(const Layout& layout, const CostModel& model, const DataNeeds& needs,
                    Count receivers, bool fan_out_bounded, bool fan_in_bounded) {
  const auto& spec = layout.spec();
  const int k = model.ports;
  const auto data = [&](Count count) {
    return model.beta * model.units(count, spec.elem_bytes) / k;
  };
  const Count root_out = needs.outgoing[static_cast<std::size_t>(layout.root())];
  double summed = 0;
  if (spec.kind == CollectiveKind::kBcast && fan_out_bounded && root_out > 0) {
    summed = spread_rounds(receivers + 1, k) * model.alpha + data(root_out);
  }
  if (is_reduction(spec.kind) && fan_in_bounded) {
    for (std::size_t i = 0; i < needs.missing.size(); ++i) {
      if (needs.missing[i] == 0) continue;
      summed = std::max(
          summed, spread_rounds(needs.sources[i] + 1, k) * model.alpha + data(needs.missing[i]));
    }
  }
  return summed;
}

}  // namespace

namespace {
// A model whose bounds hold for `model` and that has neither in-place combines, helped
// transfers nor a rate past the handshake (rendezvous_beta: beta takes the lesser of the
// two): every op takes at least as long under `model` as under it. A receive-reduce
// that combines in place takes alpha + gamma*m, at least (beta' + gamma')*m with beta' =
// gamma' = min(beta, gamma)/2 (each pair's beta likewise); a helped transfer, and the
// reduction it does with a receive-reduce, take half their data time: beta and gamma halved.
CostModel bounding_model(CostModel model) {
  if (model.rendezvous_beta) {  // a message past the handshake may move at either rate
    model.beta = std::min(model.beta, *model.rendezvous_beta);
    model.rendezvous_beta.reset();
  }
  std::vector<Time*> betas{&model.beta};
  if (model.inter_beta) betas.push_back(&*model.inter_beta);
  for (Time& b : model.pair_beta) betas.push_back(&b);
  if (model.combines_in_place) {
    // (beta' + gamma' <= gamma/2 + gamma/2 for every pair; beta' <= beta, gamma' <= gamma.)
    const Time gamma = model.gamma;
    model.gamma = std::min(model.beta, gamma) / 2;
    for (Time* b : betas) *b = std::min(*b, gamma) / 2;
    model.combines_in_place = false;
  }
  if (model.helped_bytes) {
    for (Time* b : betas) *b /= 2;
    model.gamma /= 2;
    model.helped_bytes.reset();
  }
  return model;
}
bool needs_bounding_model(const CostModel& model) {
  return model.combines_in_place || model.helped_bytes.has_value() ||
         model.rendezvous_beta.has_value();
}
}  // namespace

std::optional<Time> lower_bound(const Layout& layout, const CostModel& model) {
  if (needs_bounding_model(model)) return lower_bound(layout, bounding_model(model));
  if (model.placement) return placement_lower_bound(layout, model);
  // Pair matrices: no single alpha or beta to bound with.
  if (!model.homogeneous()) return std::nullopt;
  const auto& spec = layout.spec();
  const DataNeeds needs = data_needs(layout);
  const std::vector<Count>& missing = needs.missing;
  const std::vector<Count>& sources = needs.sources;
  const std::vector<Count>& outgoing = needs.outgoing;
  Count max_missing = 0;
  Count max_sources = 0;
  Count receivers = 0;
  for (std::size_t i = 0; i < missing.size(); ++i) {
    max_missing = std::max(max_missing, missing[i]);
    max_sources = std::max(max_sources, sources[i]);
    receivers += missing[i] > 0 ? 1 : 0;
  }
  // Nothing must arrive anywhere: no message is needed, and a message of no elements costs
  // nothing (so a barrier, whose messages may be empty, has no bound above 0 here; Bruck et
  // al.'s R(p) rounds hold for barriers whose messages carry data, as the registry's do).
  if (max_missing == 0) return 0.0;
  const int k = model.ports;
  const double alpha = model.alpha;
  const auto units = [&](Count count) { return model.units(count, spec.elem_bytes); };
  const auto data = [&](Count count) { return model.beta * units(count) / k; };

  // Latency: every message costs at least alpha, and the set of ranks that hold a given
  // rank's data (or whose data a given rank holds) grows at most (k+1)-fold per message time.
  // With shared sends, or a send gap, a rank's data can reach any number of ranks in one
  // message time: only the second set counts then. With a receive gap a rank can take in
  // any number of ranks' data in one message time: only the first counts, and only one
  // message time is certain where something must arrive at all.
  const bool fan_out_bounded = model.send_mode == SendMode::kPort && !model.send_gap.has_value();
  const bool fan_in_bounded = !model.receive_gap.has_value();
  const Count fan_in = fan_in_bounded ? max_sources : std::min<Count>(max_sources, 1);
  const Count fan = std::max(fan_in, fan_out_bounded && (spec.kind == CollectiveKind::kBcast ||
                                                         spec.kind == CollectiveKind::kScatter ||
                                                         spec.kind == CollectiveKind::kScatterv)
                                         ? receivers
                                         : Count{0});
  const double latency = spread_rounds(fan + 1, k) * alpha;

  // Bandwidth at a receiver (Chan et al.'s bandwidth terms; Bruck et al.'s (p-1)/p·n/k for
  // alltoall): a rank that must receive m > 0 elements holds its k receive ports for at
  // least beta*m in all (a receive gap releases a port after g + beta*m, never sooner), and
  // its last transfer ends alpha after its port work: alpha + beta*m/k. Every send mode.
  double receive = 0;
  for (const Count m : missing) receive = std::max(receive, m > 0 ? alpha + data(m) : 0.0);
  // Bandwidth at a sender (the root's (p-1)/p·n·beta of scatter, n·beta of bcast): every
  // element that must leave a rank leaves it first by a send that holds one of its k send
  // ports for at least beta*m (a send that joins a shared one carries what the one it joins,
  // started earlier, carries; a send gap releases after g + beta*m): alpha + beta*m/k.
  // Receiver-driven sends hold no port at their sender (at most the gap): no sender bound.
  double send = 0;
  if (model.send_mode != SendMode::kReceiver) {
    for (const Count m : outgoing) send = std::max(send, m > 0 ? alpha + data(m) : 0.0);
  }
  const double summed =
      summed_bound(layout, model, needs, receivers, fan_out_bounded, fan_in_bounded);
  const auto [reduction, aggregate] = reduction_bounds(layout, model, fan_in_bounded);
  const double memory = memory_bound(missing, model, spec.elem_bytes);
  const double own = own_block_bound(layout, model, missing);
  return std::max({latency, receive, send, summed, link_lower_bound(layout, model), reduction,
                   aggregate, memory, own});
}

Time link_lower_bound(const Layout& layout, const CostModel& model) {
  if (!model.topology || !model.homogeneous()) return 0;
  if (needs_bounding_model(model)) return link_lower_bound(layout, bounding_model(model));
  const auto& spec = layout.spec();
  const Topology& t = *model.topology;
  const Rank p = layout.nranks();
  int crossings = 1;
  switch (spec.kind) {
    case CollectiveKind::kAllgather:
    case CollectiveKind::kAllgatherv:
    case CollectiveKind::kReduceScatter:
    case CollectiveKind::kReduceScatterBlock:
      break;
    case CollectiveKind::kAllreduce:
      crossings = 2;
      break;
    default:
      return 0;
  }
  // Channels that exist: a mesh lacks the wrap links (d_q = 1 has none; on a torus with
  // d_q = 2 both parallel links exist).
  double channels = 0;
  for (const int d : t.dims) {
    const double per_line = t.kind == TopologyKind::kTorus ? (d > 1 ? d : 0) : d - 1;
    channels += per_line * static_cast<double>(p) / d;
  }
  if (t.links == LinkMode::kBidirectional) channels *= 2;
  if (channels == 0) return 0;
  const double n = model.units(layout.total(), spec.elem_bytes);
  return crossings * static_cast<double>(p - 1) * n * model.beta / channels;
}

}  // namespace optcoll
