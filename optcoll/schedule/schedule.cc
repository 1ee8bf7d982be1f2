// SPDX-License-Identifier: Apache-2.0
// File: small helpers over the schedule types.
#include "optcoll/schedule/schedule.h"

#include <fmt/format.h>

namespace optcoll {

std::vector<Rank> TreeShape::parents() const {
  std::vector<Rank> parent(children.size(), kNoRank);
  for (std::size_t r = 0; r < children.size(); ++r) {
    for (const Rank child : children[r]) {
      if (child >= 0 && static_cast<std::size_t>(child) < parent.size()) {
        parent[static_cast<std::size_t>(child)] = static_cast<Rank>(r);
      }
    }
  }
  return parent;
}

std::vector<Rank> TreeShape::preorder() const {
  std::vector<Rank> order;
  if (root < 0 || static_cast<std::size_t>(root) >= children.size()) return order;
  order.reserve(children.size());
  std::vector<Rank> stack{root};
  while (!stack.empty() && order.size() <= children.size()) {
    const Rank node = stack.back();
    stack.pop_back();
    order.push_back(node);
    const auto& kids = children[static_cast<std::size_t>(node)];
    for (auto it = kids.rbegin(); it != kids.rend(); ++it) {
      if (*it >= 0 && static_cast<std::size_t>(*it) < children.size()) stack.push_back(*it);
    }
  }
  return order;
}

std::size_t Schedule::op_count() const {
  std::size_t total = 0;
  for (const auto& program : ranks) total += program.ops.size();
  return total;
}

bool is_communication(const Action& action) { return is_send(action) || is_receive(action); }

bool is_send(const Action& action) {
  return std::holds_alternative<Send>(action) || std::holds_alternative<SendSlices>(action);
}

bool is_receive(const Action& action) {
  return std::holds_alternative<Recv>(action) || std::holds_alternative<RecvReduce>(action) ||
         std::holds_alternative<RecvSlices>(action);
}

Rank peer_of(const Action& action) {
  return std::visit(
      [](const auto& a) -> Rank {
        if constexpr (requires { a.peer; }) {
          return a.peer;
        } else {
          return kNoRank;
        }
      },
      action);
}

Count total_count(const std::vector<Slice>& slices) {
  Count total = 0;
  for (const Slice& slice : slices) total += slice.count;
  return total;
}

Count message_count(const Action& action) {
  if (const auto* a = std::get_if<Send>(&action)) return a->src.count;
  if (const auto* a = std::get_if<Recv>(&action)) return a->dst.count;
  if (const auto* a = std::get_if<RecvReduce>(&action)) return a->dst.count;
  if (const auto* a = std::get_if<SendSlices>(&action)) return total_count(a->src);
  if (const auto* a = std::get_if<RecvSlices>(&action)) return total_count(a->dst);
  return 0;
}

bool copy_folds_into(const Copy& copy, const Action& dependent) {
  if (copy.dst.count == 0 || copy.src.overlaps(copy.dst)) return false;
  if (const auto* r = std::get_if<RecvReduce>(&dependent)) return r->dst == copy.dst;
  const auto* r = std::get_if<Reduce>(&dependent);
  return r != nullptr && r->dst == copy.dst && !r->src.overlaps(copy.dst);
}

std::string_view buf_name(Buf buf) {
  switch (buf) {
    case Buf::kInput:
      return "in";
    case Buf::kOutput:
      return "out";
    case Buf::kScratch:
      return "scratch";
  }
  return "?";
}

std::string describe(const Slice& slice) {
  return fmt::format("{}[{}:+{}]", buf_name(slice.buf), slice.offset, slice.count);
}

std::string describe(const std::vector<Slice>& slices) {
  if (slices.empty()) return "nothing";
  std::string text;
  for (const Slice& slice : slices) {
    if (!text.empty()) text += ' ';
    text += describe(slice);
  }
  return text;
}

namespace {
std::string_view side_name(Side side) { return side == Side::kLeft ? "left" : "right"; }

struct ActionDescriber {
  std::string operator()(const Send& a) const {
    return fmt::format("send {} elems from {} to rank {}", a.src.count, describe(a.src), a.peer);
  }
  std::string operator()(const Recv& a) const {
    return fmt::format("recv {} elems from rank {} into {}", a.dst.count, a.peer, describe(a.dst));
  }
  std::string operator()(const RecvReduce& a) const {
    return fmt::format("recv-reduce {} elems from rank {} into {} (incoming {})", a.dst.count,
                       a.peer, describe(a.dst), side_name(a.incoming));
  }
  std::string operator()(const SendSlices& a) const {
    return fmt::format("send {} elems from {} to rank {}", total_count(a.src), describe(a.src),
                       a.peer);
  }
  std::string operator()(const RecvSlices& a) const {
    return fmt::format("recv {} elems from rank {} into {}", total_count(a.dst), a.peer,
                       describe(a.dst));
  }
  std::string operator()(const Copy& a) const {
    return fmt::format("copy {} elems {} -> {}", a.src.count, describe(a.src), describe(a.dst));
  }
  std::string operator()(const Reduce& a) const {
    return fmt::format("reduce {} elems {} into {} (src {})", a.src.count, describe(a.src),
                       describe(a.dst), side_name(a.src_side));
  }
};
}  // namespace

std::string describe(const Action& action) { return std::visit(ActionDescriber{}, action); }

std::string describe_op(const Schedule& schedule, Rank rank, OpId op) {
  const auto& ops = schedule.ranks.at(static_cast<std::size_t>(rank)).ops;
  const Op& o = ops.at(static_cast<std::size_t>(op));
  std::string text = describe(o.action);
  if (is_communication(o.action)) {
    // Messages also name their seq: the matching key an executor waits on.
    text += fmt::format(" (seq {})", o.seq);
  }
  return fmt::format("rank {} op {}: {}", rank, op, text);
}

}  // namespace optcoll
