// SPDX-License-Identifier: Apache-2.0
// File: the text schedule format, version 1 (docs/schedule_format.md).
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "optcoll/model/error.h"
#include "optcoll/schedule/io/io.h"

namespace optcoll::io {
namespace {

std::string side_token(Side side) { return side == Side::kLeft ? "left" : "right"; }

struct TextWriter {
  std::string& out;
  void operator()(const Send& a, const Op& op) const {
    out += fmt::format("send {} seq {} {}", a.peer, op.seq, describe(a.src));
  }
  void operator()(const Recv& a, const Op& op) const {
    out += fmt::format("recv {} seq {} {}", a.peer, op.seq, describe(a.dst));
  }
  void operator()(const RecvReduce& a, const Op& op) const {
    out += fmt::format("recvreduce {} seq {} {} {}", a.peer, op.seq, describe(a.dst),
                       side_token(a.incoming));
  }
  // "sendslices PEER seq S K SLICE..." (K slices, so that an empty list reads back).
  void operator()(const SendSlices& a, const Op& op) const {
    out += fmt::format("sendslices {} seq {} {}", a.peer, op.seq, a.src.size());
    for (const Slice& slice : a.src) out += fmt::format(" {}", describe(slice));
  }
  void operator()(const RecvSlices& a, const Op& op) const {
    out += fmt::format("recvslices {} seq {} {}", a.peer, op.seq, a.dst.size());
    for (const Slice& slice : a.dst) out += fmt::format(" {}", describe(slice));
  }
  void operator()(const Copy& a, const Op&) const {
    out += fmt::format("copy {} {}", describe(a.src), describe(a.dst));
  }
  void operator()(const Reduce& a, const Op&) const {
    out += fmt::format("reduce {} {} {}", describe(a.src), describe(a.dst), side_token(a.src_side));
  }
};

// Splits a line into whitespace-separated tokens, dropping a trailing '#' comment.
std::vector<std::string_view> tokenize(std::string_view line) {
  std::vector<std::string_view> tokens;
  if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t' && line[j] != '\r') ++j;
    if (j > i) tokens.push_back(line.substr(i, j - i));
    i = j;
  }
  return tokens;
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Schedule parse() {
    Schedule s;
    expect_header();
    s.algorithm = std::string(expect_keyword_value("algorithm"));
    next_line();
    if (tokens_.size() == 2 && tokens_[0] == "params") {
      s.params = std::string(tokens_[1]);
      next_line();
    }
    s.spec = parse_spec();  // validated
    const auto p = static_cast<std::size_t>(s.spec.nranks);
    next_line();
    const TreeLines tree = parse_tree(s.spec.nranks);
    // Rank programs are appended as their sections are read (never allocated up front from
    // the header's nranks, which a short malformed file could set to 2^24).
    for (std::size_t r = 0; r < p; ++r) s.ranks.push_back(parse_rank(r, s.spec.nranks));
    if (tokens_.size() != 1 || tokens_[0] != "end")
      fail("expected 'end' after the last rank (truncated file?)");
    next_line();
    if (!tokens_.empty()) fail("unexpected text after 'end'");
    if (tree.root) {
      TreeShape shape;
      shape.root = *tree.root;
      shape.children.resize(p);
      for (const auto& [node, kids] : tree.children) shape.children[node] = kids;
      s.tree = std::move(shape);
    }
    return s;
  }

 private:
  // The tree's child lists, placed once every rank section has been read (so nothing is
  // allocated from the header's nranks alone).
  struct TreeLines {
    std::optional<Rank> root;
    std::map<std::size_t, std::vector<Rank>> children;
  };

  // From the 'collective' line to 'elem_bytes': the spec, validated (kInvalidArgument names
  // the problem).
  CollectiveSpec parse_spec() {
    CollectiveSpec spec;
    if (tokens_.size() != 2 || tokens_[0] != "collective") fail("expected 'collective <value>'");
    const auto kind_name = tokens_[1];
    const auto kind = parse_collective(kind_name);
    if (!kind) fail("unknown collective '{}'", kind_name);
    spec.kind = *kind;
    spec.nranks = static_cast<Rank>(keyword_int("nranks", 1, Rank{1} << 24));
    spec.root = static_cast<Rank>(keyword_int("root", 0, Rank{1} << 24));
    spec.count = keyword_int("count", 0, kMaxCount);
    next_line();
    if (!tokens_.empty() && tokens_[0] == "counts") {
      for (std::size_t i = 1; i < tokens_.size(); ++i) {
        spec.counts.push_back(to_int(tokens_[i], 0, kMaxCount, "a count"));
      }
      next_line();
    }
    if (!tokens_.empty() && tokens_[0] == "counts_of") {  // optional: alltoallv's row and column
      if (tokens_.size() != 2) fail("expected 'counts_of <rank>'");
      spec.counts_of = static_cast<Rank>(to_int(tokens_[1], 0, Rank{1} << 24, "a rank"));
      next_line();
    }
    spec.commutative = current_keyword_bool("commutative");
    next_line();
    if (!tokens_.empty() && tokens_[0] == "reproducible") {  // optional
      spec.reproducible = current_keyword_bool("reproducible");
      next_line();
    }
    if (tokens_.size() != 2 || tokens_[0] != "elem_bytes") fail("expected 'elem_bytes <value>'");
    spec.elem_bytes = static_cast<std::size_t>(to_int(tokens_[1], 1, 4096, "elem_bytes"));
    validate(spec);
    return spec;
  }

  // The optional 'tree <root>' line and its 'children <rank> <child>...' lines.
  TreeLines parse_tree(Rank nranks) {
    TreeLines tree;
    if (tokens_.empty() || tokens_[0] != "tree") return tree;
    if (tokens_.size() != 2) fail("expected 'tree <root>'");
    tree.root = static_cast<Rank>(to_int(tokens_[1], 0, nranks - 1, "the tree root"));
    next_line();
    while (!tokens_.empty() && tokens_[0] == "children") {
      if (tokens_.size() < 3) fail("expected 'children <rank> <child>...'");
      const auto node = static_cast<std::size_t>(to_int(tokens_[1], 0, nranks - 1, "a rank"));
      auto& kids = tree.children[node];
      if (!kids.empty()) fail("children of rank {} listed twice", node);
      for (std::size_t i = 2; i < tokens_.size(); ++i) {
        kids.push_back(static_cast<Rank>(to_int(tokens_[i], 0, nranks - 1, "a rank")));
      }
      next_line();
    }
    return tree;
  }

  // Rank r's section: 'rank r scratch <count>', then its ops up to the next 'rank' or 'end'.
  RankProgram parse_rank(std::size_t r, Rank nranks) {
    RankProgram program;
    if (tokens_.size() != 4 || tokens_[0] != "rank" || tokens_[2] != "scratch") {
      fail("expected 'rank {} scratch <count>'", r);
    }
    if (to_int(tokens_[1], 0, nranks - 1, "a rank") != static_cast<Count>(r)) {
      fail("expected the program of rank {} next", r);
    }
    program.scratch_count = to_int(tokens_[3], 0, kMaxCount, "the scratch size");
    next_line();
    while (!tokens_.empty() && tokens_[0] != "rank" && tokens_[0] != "end") {
      program.ops.push_back(parse_op(program.ops.size()));
      next_line();
    }
    return program;
  }

  template <typename... Args>
  [[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) const {
    if (at_eof_) {
      throw Error(ErrorCode::kParse, fmt::format("schedule text: unexpected end of file: {}",
                                                 fmt::format(format, std::forward<Args>(args)...)));
    }
    throw Error(ErrorCode::kParse, fmt::format("schedule text line {}: {}", line_number_,
                                               fmt::format(format, std::forward<Args>(args)...)));
  }

  // Moves to the next non-empty line; at end of file tokens_ is empty and at_eof_ set.
  void next_line() {
    tokens_.clear();
    while (tokens_.empty()) {
      if (pos_ >= text_.size()) {
        at_eof_ = true;
        return;
      }
      const auto newline = text_.find('\n', pos_);
      const auto end = newline == std::string_view::npos ? text_.size() : newline;
      tokens_ = tokenize(text_.substr(pos_, end - pos_));
      pos_ = end + 1;
      ++line_number_;
    }
  }

  void expect_header() {
    next_line();
    if (tokens_.size() != 2 || tokens_[0] != "optcoll-schedule") {
      fail("expected 'optcoll-schedule {}' as the first line", kScheduleFormatVersion);
    }
    const auto version = to_int(tokens_[1], 0, 1000, "the format version");
    if (version != kScheduleFormatVersion) {
      fail("format version {} is not supported (this build reads version {})", version,
           kScheduleFormatVersion);
    }
  }

  std::string_view expect_keyword_value(std::string_view keyword) {
    next_line();
    if (tokens_.size() != 2 || tokens_[0] != keyword) fail("expected '{} <value>'", keyword);
    return tokens_[1];
  }

  Count keyword_int(std::string_view keyword, Count lo, Count hi) {
    return to_int(expect_keyword_value(keyword), lo, hi, keyword);
  }

  bool current_keyword_bool(std::string_view keyword) {
    if (tokens_.size() != 2 || tokens_[0] != keyword) fail("expected '{} true|false'", keyword);
    if (tokens_[1] == "true") return true;
    if (tokens_[1] == "false") return false;
    fail("{} must be 'true' or 'false', got '{}'", keyword, tokens_[1]);
  }

  Count to_int(std::string_view token, Count lo, Count hi, std::string_view what) const {
    Count value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size()) {
      fail("expected an integer for {}, got '{}'", what, token);
    }
    if (value < lo || value > hi) fail("{} {} out of range [{}, {}]", what, value, lo, hi);
    return value;
  }

  // A release time: a finite decimal number >= 0 (what the writer's shortest form gives).
  Time to_time(std::string_view token) const {
    Time value = 0;
    const auto [ptr, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
    if (ec != std::errc() || ptr != token.data() + token.size() || !std::isfinite(value) ||
        value < 0) {
      fail("expected a finite time >= 0 for not_before, got '{}'", token);
    }
    return value;
  }

  Slice to_slice(std::string_view token) const {
    // buf[offset:+count]
    const auto open = token.find('[');
    const auto colon = token.find(":+");
    if (open == std::string_view::npos || colon == std::string_view::npos || token.back() != ']' ||
        colon < open) {
      fail("expected a slice like out[0:+8], got '{}'", token);
    }
    Slice slice;
    const auto buf = token.substr(0, open);
    if (buf == "in")
      slice.buf = Buf::kInput;
    else if (buf == "out")
      slice.buf = Buf::kOutput;
    else if (buf == "scratch")
      slice.buf = Buf::kScratch;
    else
      fail("unknown buffer '{}' (expected in, out or scratch)", buf);
    slice.offset = to_int(token.substr(open + 1, colon - open - 1), 0, kMaxCount, "a slice offset");
    slice.count =
        to_int(token.substr(colon + 2, token.size() - colon - 3), 0, kMaxCount, "a slice count");
    return slice;
  }

  Side to_side(std::string_view token) const {
    if (token == "left") return Side::kLeft;
    if (token == "right") return Side::kRight;
    fail("expected 'left' or 'right', got '{}'", token);
  }

  Op parse_op(std::size_t index) {
    if (tokens_.size() < 2) fail("expected an op '<index> <kind> ...'");
    if (to_int(tokens_[0], 0, std::numeric_limits<OpId>::max(), "the op index") !=
        static_cast<Count>(index)) {
      fail("expected op index {}, got '{}'", index, tokens_[0]);
    }
    Op op;
    const auto kind = tokens_[1];
    std::size_t next = 0;
    auto need = [&](std::size_t n) {
      if (tokens_.size() < n) fail("op '{}' is missing operands", kind);
    };
    auto message = [&](std::size_t base) {
      need(base + 4);
      if (tokens_[base + 1] != "seq")
        fail("expected 'seq' after the peer, got '{}'", tokens_[base + 1]);
      op.seq = static_cast<std::int32_t>(
          to_int(tokens_[base + 2], 0, std::numeric_limits<std::int32_t>::max(), "seq"));
      return static_cast<Rank>(
          to_int(tokens_[base], 0, std::numeric_limits<Rank>::max(), "a peer"));
    };
    // SendSlices / RecvSlices: the slice count, then the slices; sets `next` past them.
    auto slice_list = [&] {
      const auto n = static_cast<std::size_t>(
          to_int(tokens_[5], 0, std::numeric_limits<std::int32_t>::max(), "a slice count"));
      need(6 + n);
      std::vector<Slice> slices;
      slices.reserve(n);
      for (std::size_t i = 0; i < n; ++i) slices.push_back(to_slice(tokens_[6 + i]));
      next = 6 + n;
      return slices;
    };
    if (kind == "sendslices") {
      const Rank peer = message(2);
      op.action = SendSlices{peer, slice_list()};
    } else if (kind == "recvslices") {
      const Rank peer = message(2);
      op.action = RecvSlices{peer, slice_list()};
    } else if (kind == "send") {
      const Rank peer = message(2);
      op.action = Send{peer, to_slice(tokens_[5])};
      next = 6;
    } else if (kind == "recv") {
      const Rank peer = message(2);
      op.action = Recv{peer, to_slice(tokens_[5])};
      next = 6;
    } else if (kind == "recvreduce") {
      const Rank peer = message(2);
      need(7);
      op.action = RecvReduce{peer, to_slice(tokens_[5]), to_side(tokens_[6])};
      next = 7;
    } else if (kind == "copy") {
      need(4);
      op.action = Copy{to_slice(tokens_[2]), to_slice(tokens_[3])};
      next = 4;
    } else if (kind == "reduce") {
      need(5);
      op.action = Reduce{to_slice(tokens_[2]), to_slice(tokens_[3]), to_side(tokens_[4])};
      next = 5;
    } else {
      fail(
          "unknown op '{}' (expected send, recv, recvreduce, sendslices, recvslices, copy or "
          "reduce)",
          kind);
    }
    if (next < tokens_.size() && tokens_[next] == "not_before") {
      if (next + 1 >= tokens_.size()) fail("expected a time after 'not_before'");
      op.not_before = to_time(tokens_[next + 1]);
      next += 2;
    }
    if (next < tokens_.size()) {
      if (tokens_[next] != "after" || next + 1 >= tokens_.size()) {
        fail("expected 'after <op>...' or the end of the line, got '{}'", tokens_[next]);
      }
      for (std::size_t i = next + 1; i < tokens_.size(); ++i) {
        op.after.push_back(static_cast<OpId>(
            to_int(tokens_[i], 0, std::numeric_limits<OpId>::max(), "a dependency")));
      }
    }
    return op;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t line_number_ = 0;
  bool at_eof_ = false;
  std::vector<std::string_view> tokens_;
};

}  // namespace

std::string to_text(const Schedule& s) {
  std::string out;
  out += fmt::format("optcoll-schedule {}\n", kScheduleFormatVersion);
  if (s.algorithm.empty() || s.algorithm.find_first_of(" \t\r\n#") != std::string::npos) {
    throw Error(ErrorCode::kInvalidArgument,
                fmt::format("schedule algorithm name '{}' must be one word", s.algorithm));
  }
  out += fmt::format("algorithm {}\n", s.algorithm);
  if (!s.params.empty()) {
    if (s.params.find_first_of(" \t\r\n#") != std::string::npos) {
      throw Error(ErrorCode::kInvalidArgument,
                  fmt::format("schedule params '{}' must be one word", s.params));
    }
    out += fmt::format("params {}\n", s.params);
  }
  out += fmt::format("collective {}\n", collective_name(s.spec.kind));
  out += fmt::format("nranks {}\nroot {}\ncount {}\n", s.spec.nranks, s.spec.root, s.spec.count);
  if (!s.spec.counts.empty()) out += fmt::format("counts {}\n", fmt::join(s.spec.counts, " "));
  if (s.spec.counts_of) out += fmt::format("counts_of {}\n", *s.spec.counts_of);
  out += fmt::format("commutative {}\n", s.spec.commutative);
  if (s.spec.reproducible) out += "reproducible true\n";
  out += fmt::format("elem_bytes {}\n", s.spec.elem_bytes);
  if (s.tree) {
    out += fmt::format("tree {}\n", s.tree->root);
    for (std::size_t r = 0; r < s.tree->children.size(); ++r) {
      if (!s.tree->children[r].empty()) {
        out += fmt::format("children {} {}\n", r, fmt::join(s.tree->children[r], " "));
      }
    }
  }
  for (std::size_t r = 0; r < s.ranks.size(); ++r) {
    out += fmt::format("rank {} scratch {}\n", r, s.ranks[r].scratch_count);
    const auto& ops = s.ranks[r].ops;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      out += fmt::format("{} ", i);
      std::visit([&](const auto& a) { TextWriter{out}(a, ops[i]); }, ops[i].action);
      if (ops[i].not_before != 0) out += fmt::format(" not_before {}", ops[i].not_before);
      if (!ops[i].after.empty()) out += fmt::format(" after {}", fmt::join(ops[i].after, " "));
      out += '\n';
    }
  }
  out += "end\n";
  return out;
}

Schedule parse_text(std::string_view text) { return Parser(text).parse(); }

Schedule parse_schedule(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') return parse_json(text);
  return parse_text(text);
}

}  // namespace optcoll::io
