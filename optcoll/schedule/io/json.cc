// SPDX-License-Identifier: Apache-2.0
// File: the JSON schedule format (same content as the text format, version 1).
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "optcoll/model/error.h"
#include "optcoll/schedule/io/io.h"

namespace optcoll::io {
namespace {

using nlohmann::json;

json slice_json(const Slice& s) { return json::array({buf_name(s.buf), s.offset, s.count}); }
json slices_json(const std::vector<Slice>& slices) {
  json list = json::array();
  for (const Slice& s : slices) list.push_back(slice_json(s));
  return list;
}
std::string side_json(Side side) { return side == Side::kLeft ? "left" : "right"; }

json op_json(const Op& op) {
  json j;
  std::visit(
      [&](const auto& a) {
        using A = std::decay_t<decltype(a)>;
        if constexpr (std::is_same_v<A, Send>) {
          j = {{"op", "send"}, {"peer", a.peer}, {"seq", op.seq}, {"src", slice_json(a.src)}};
        } else if constexpr (std::is_same_v<A, Recv>) {
          j = {{"op", "recv"}, {"peer", a.peer}, {"seq", op.seq}, {"dst", slice_json(a.dst)}};
        } else if constexpr (std::is_same_v<A, RecvReduce>) {
          j = {{"op", "recvreduce"},
               {"peer", a.peer},
               {"seq", op.seq},
               {"dst", slice_json(a.dst)},
               {"incoming", side_json(a.incoming)}};
        } else if constexpr (std::is_same_v<A, SendSlices>) {
          j = {
              {"op", "sendslices"}, {"peer", a.peer}, {"seq", op.seq}, {"src", slices_json(a.src)}};
        } else if constexpr (std::is_same_v<A, RecvSlices>) {
          j = {
              {"op", "recvslices"}, {"peer", a.peer}, {"seq", op.seq}, {"dst", slices_json(a.dst)}};
        } else if constexpr (std::is_same_v<A, Copy>) {
          j = {{"op", "copy"}, {"src", slice_json(a.src)}, {"dst", slice_json(a.dst)}};
        } else {
          static_assert(std::is_same_v<A, Reduce>);
          j = {{"op", "reduce"},
               {"src", slice_json(a.src)},
               {"dst", slice_json(a.dst)},
               {"src_side", side_json(a.src_side)}};
        }
      },
      op.action);
  if (op.not_before != 0) j["not_before"] = op.not_before;
  if (!op.after.empty()) j["after"] = op.after;
  return j;
}

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw Error(ErrorCode::kParse, fmt::format("schedule JSON {}: {}", where, what));
}

const json& field(const json& obj, const char* key, const std::string& where) {
  if (!obj.is_object()) fail(where, "expected an object");
  const auto it = obj.find(key);
  if (it == obj.end()) fail(where, fmt::format("missing field \"{}\"", key));
  return *it;
}

Count get_int(const json& value, Count lo, Count hi, const std::string& where) {
  if (!value.is_number_integer()) fail(where, "expected an integer");
  const auto v = value.get<std::int64_t>();
  if (v < lo || v > hi) fail(where, fmt::format("{} out of range [{}, {}]", v, lo, hi));
  return v;
}

Slice get_slice(const json& value, const std::string& where) {
  if (!value.is_array() || value.size() != 3 || !value[0].is_string()) {
    fail(where, "expected a slice [\"in\"|\"out\"|\"scratch\", offset, count]");
  }
  Slice s;
  const auto buf = value[0].get<std::string>();
  if (buf == "in")
    s.buf = Buf::kInput;
  else if (buf == "out")
    s.buf = Buf::kOutput;
  else if (buf == "scratch")
    s.buf = Buf::kScratch;
  else
    fail(where, fmt::format("unknown buffer \"{}\"", buf));
  s.offset = get_int(value[1], 0, kMaxCount, where + " offset");
  s.count = get_int(value[2], 0, kMaxCount, where + " count");
  return s;
}

std::vector<Slice> get_slices(const json& value, const std::string& where) {
  if (!value.is_array()) fail(where, "expected a list of slices");
  std::vector<Slice> slices;
  slices.reserve(value.size());
  for (std::size_t i = 0; i < value.size(); ++i) {
    slices.push_back(get_slice(value[i], fmt::format("{}[{}]", where, i)));
  }
  return slices;
}

Side get_side(const json& value, const std::string& where) {
  if (value == "left") return Side::kLeft;
  if (value == "right") return Side::kRight;
  fail(where, "expected \"left\" or \"right\"");
}

Op parse_op(const json& j, const std::string& where) {
  Op op;
  const json& kind = field(j, "op", where);
  if (!kind.is_string()) fail(where, "\"op\" must be a string");
  const auto name = kind.get<std::string>();
  constexpr Count kMaxInt32 = std::numeric_limits<std::int32_t>::max();
  auto peer = [&] {
    return static_cast<Rank>(get_int(field(j, "peer", where), 0, kMaxInt32, where + " peer"));
  };
  auto seq = [&] {
    return static_cast<std::int32_t>(get_int(field(j, "seq", where), 0, kMaxInt32, where + " seq"));
  };
  if (name == "send") {
    op.action = Send{peer(), get_slice(field(j, "src", where), where + " src")};
    op.seq = seq();
  } else if (name == "recv") {
    op.action = Recv{peer(), get_slice(field(j, "dst", where), where + " dst")};
    op.seq = seq();
  } else if (name == "recvreduce") {
    op.action = RecvReduce{peer(), get_slice(field(j, "dst", where), where + " dst"),
                           get_side(field(j, "incoming", where), where + " incoming")};
    op.seq = seq();
  } else if (name == "sendslices") {
    op.action = SendSlices{peer(), get_slices(field(j, "src", where), where + " src")};
    op.seq = seq();
  } else if (name == "recvslices") {
    op.action = RecvSlices{peer(), get_slices(field(j, "dst", where), where + " dst")};
    op.seq = seq();
  } else if (name == "copy") {
    op.action = Copy{get_slice(field(j, "src", where), where + " src"),
                     get_slice(field(j, "dst", where), where + " dst")};
  } else if (name == "reduce") {
    op.action = Reduce{get_slice(field(j, "src", where), where + " src"),
                       get_slice(field(j, "dst", where), where + " dst"),
                       get_side(field(j, "src_side", where), where + " src_side")};
  } else {
    fail(where, fmt::format("unknown op \"{}\"", name));
  }
  if (const auto it = j.find("not_before"); it != j.end()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
      fail(where, "\"not_before\" must be a finite time >= 0");
    }
    op.not_before = it->get<Time>();
  }
  if (const auto it = j.find("after"); it != j.end()) {
    if (!it->is_array()) fail(where, "\"after\" must be an array");
    for (const auto& dep : *it)
      op.after.push_back(static_cast<OpId>(get_int(dep, 0, kMaxInt32, where + " after")));
  }
  return op;
}

}  // namespace

std::string to_json(const Schedule& s) {
  json doc;
  doc["format"] = "optcoll-schedule";
  doc["version"] = kScheduleFormatVersion;
  doc["algorithm"] = s.algorithm;
  if (!s.params.empty()) doc["params"] = s.params;
  doc["collective"] = collective_name(s.spec.kind);
  doc["nranks"] = s.spec.nranks;
  doc["root"] = s.spec.root;
  doc["count"] = s.spec.count;
  if (!s.spec.counts.empty()) doc["counts"] = s.spec.counts;
  if (s.spec.counts_of) doc["counts_of"] = *s.spec.counts_of;
  doc["commutative"] = s.spec.commutative;
  if (s.spec.reproducible) doc["reproducible"] = true;
  doc["elem_bytes"] = s.spec.elem_bytes;
  if (s.tree) doc["tree"] = {{"root", s.tree->root}, {"children", s.tree->children}};
  json ranks = json::array();
  for (const auto& program : s.ranks) {
    json ops = json::array();
    for (const auto& op : program.ops) ops.push_back(op_json(op));
    ranks.push_back({{"scratch", program.scratch_count}, {"ops", std::move(ops)}});
  }
  doc["ranks"] = std::move(ranks);
  return doc.dump() + "\n";
}

namespace {

// The optional "tree": its root and one child list per rank.
TreeShape parse_tree(const json& node, Rank nranks) {
  TreeShape tree;
  tree.root = static_cast<Rank>(get_int(field(node, "root", "tree"), 0, nranks - 1, "tree root"));
  const json& children = field(node, "children", "tree");
  if (!children.is_array() || children.size() != static_cast<std::size_t>(nranks))
    fail("tree", "\"children\" must hold one list per rank");
  for (const auto& list : children) {
    if (!list.is_array()) fail("tree", "\"children\" entries must be arrays");
    std::vector<Rank> kids;
    for (const auto& c : list)
      kids.push_back(static_cast<Rank>(get_int(c, 0, nranks - 1, "tree child")));
    tree.children.push_back(std::move(kids));
  }
  return tree;
}

}  // namespace

Schedule parse_json(std::string_view text) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    throw Error(ErrorCode::kParse, fmt::format("schedule JSON is malformed: {}", e.what()));
  }
  const std::string top = "document";
  if (field(doc, "format", top) != "optcoll-schedule")
    fail(top, "\"format\" must be \"optcoll-schedule\"");
  const auto version = get_int(field(doc, "version", top), 0, 1000, "version");
  if (version != kScheduleFormatVersion) {
    fail(top, fmt::format("format version {} is not supported (this build reads version {})",
                          version, kScheduleFormatVersion));
  }
  Schedule s;
  const json& algorithm = field(doc, "algorithm", top);
  if (!algorithm.is_string()) fail(top, "\"algorithm\" must be a string");
  s.algorithm = algorithm.get<std::string>();
  if (const auto it = doc.find("params"); it != doc.end()) {
    if (!it->is_string()) fail(top, "\"params\" must be a string");
    s.params = it->get<std::string>();
  }
  const json& collective = field(doc, "collective", top);
  const auto kind =
      collective.is_string() ? parse_collective(collective.get<std::string>()) : std::nullopt;
  if (!kind) fail(top, "\"collective\" names no known collective");
  s.spec.kind = *kind;
  s.spec.nranks = static_cast<Rank>(get_int(field(doc, "nranks", top), 1, Rank{1} << 24, "nranks"));
  s.spec.root = static_cast<Rank>(get_int(field(doc, "root", top), 0, Rank{1} << 24, "root"));
  s.spec.count = get_int(field(doc, "count", top), 0, kMaxCount, "count");
  if (const auto it = doc.find("counts"); it != doc.end()) {
    if (!it->is_array()) fail(top, "\"counts\" must be an array");
    for (const auto& c : *it) s.spec.counts.push_back(get_int(c, 0, kMaxCount, "counts"));
  }
  if (const auto it = doc.find("counts_of"); it != doc.end()) {
    s.spec.counts_of = static_cast<Rank>(get_int(*it, 0, Rank{1} << 24, "counts_of"));
  }
  const json& commutative = field(doc, "commutative", top);
  if (!commutative.is_boolean()) fail(top, "\"commutative\" must be true or false");
  s.spec.commutative = commutative.get<bool>();
  if (doc.contains("reproducible")) {
    const json& reproducible = doc["reproducible"];
    if (!reproducible.is_boolean()) fail(top, "\"reproducible\" must be true or false");
    s.spec.reproducible = reproducible.get<bool>();
  }
  s.spec.elem_bytes =
      static_cast<std::size_t>(get_int(field(doc, "elem_bytes", top), 1, 4096, "elem_bytes"));
  validate(s.spec);
  const auto p = static_cast<std::size_t>(s.spec.nranks);
  if (const auto it = doc.find("tree"); it != doc.end()) s.tree = parse_tree(*it, s.spec.nranks);
  const json& ranks = field(doc, "ranks", top);
  if (!ranks.is_array() || ranks.size() != p) {
    fail(top, fmt::format("\"ranks\" must hold {} rank programs", p));
  }
  s.ranks.resize(p);
  for (std::size_t r = 0; r < p; ++r) {
    const std::string where = fmt::format("rank {}", r);
    s.ranks[r].scratch_count =
        get_int(field(ranks[r], "scratch", where), 0, kMaxCount, where + " scratch");
    const json& ops = field(ranks[r], "ops", where);
    if (!ops.is_array()) fail(where, "\"ops\" must be an array");
    s.ranks[r].ops.reserve(ops.size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      s.ranks[r].ops.push_back(parse_op(ops[i], fmt::format("rank {} op {}", r, i)));
    }
  }
  return s;
}

}  // namespace optcoll::io
