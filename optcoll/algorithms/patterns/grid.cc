// SPDX-License-Identifier: Apache-2.0
// File: logical grids and factorizations of p (grid.h).
#include "optcoll/algorithms/patterns/grid.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "optcoll/model/error.h"

namespace optcoll::algorithms::patterns {
namespace {

void factorize(Rank rest, int max_dims, std::vector<Rank>& prefix,
               std::vector<std::vector<Rank>>& out) {
  if (rest == 1) {
    if (!prefix.empty()) out.push_back(prefix);
    return;
  }
  if (static_cast<int>(prefix.size()) == max_dims) return;
  for (Rank f = 2; f <= rest; ++f) {
    if (rest % f != 0) continue;
    prefix.push_back(f);
    factorize(rest / f, max_dims, prefix, out);
    prefix.pop_back();
  }
}

}  // namespace

Grid::Grid(std::vector<Rank> dims) : dims_(std::move(dims)), strides_(dims_.size()) {
  OPTCOLL_CHECK(!dims_.empty(), "a grid needs at least one dimension");
  for (std::size_t i = dims_.size(); i-- > 0;) {
    OPTCOLL_CHECK(dims_[i] >= 1, "grid dimension {} is {}", i, dims_[i]);
    strides_[i] = nranks_;
    nranks_ *= dims_[i];
  }
}

Members Grid::line(Rank r, int i) const {
  const Rank first = r - coord(r, i) * stride(i);
  Members members(static_cast<std::size_t>(dim(i)));
  for (Rank c = 0; c < dim(i); ++c) members[static_cast<std::size_t>(c)] = first + c * stride(i);
  return members;
}

std::vector<Members> Grid::lines(int i, Rank anchor) const {
  std::vector<Members> out;
  for (Rank r = 0; r < nranks_; ++r) {
    if (coord(r, i) != 0) continue;
    bool keep = true;
    for (int j = i + 1; anchor >= 0 && j < ndims(); ++j)
      keep = keep && coord(r, j) == coord(anchor, j);
    if (keep) out.push_back(line(r, i));
  }
  return out;
}

std::string dims_problem(std::string_view text, Rank p) {
  if (text == "auto") return {};
  std::int64_t product = 1;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of("xX", start);
    if (end == std::string_view::npos) end = text.size();
    const auto field = text.substr(start, end - start);
    Rank value = 0;
    const auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
    if (field.empty() || ec != std::errc() || ptr != field.data() + field.size() || value < 1) {
      return fmt::format("dims={} is not a product of positive integers like 4x8", text);
    }
    if (value > p) return fmt::format("dims={} has a factor larger than p = {}", text, p);
    product *= value;
    if (product > p) break;
    start = end + 1;
  }
  if (product != p) return fmt::format("dims={} multiplies to {}, not to p = {}", text, product, p);
  return {};
}

std::vector<Rank> parse_dims(std::string_view text, Rank p) {
  if (const auto problem = dims_problem(text, p); !problem.empty()) {
    throw Error(ErrorCode::kInvalidArgument, problem);
  }
  std::vector<Rank> dims;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find_first_of("xX", start);
    if (end == std::string_view::npos) end = text.size();
    Rank value = 0;
    std::from_chars(text.data() + start, text.data() + end, value);
    dims.push_back(value);
    start = end + 1;
  }
  return dims;
}

std::string dims_to_string(const std::vector<Rank>& dims) {
  std::string text;
  for (const Rank d : dims) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

std::vector<std::vector<Rank>> ordered_factorizations(Rank p, int max_dims) {
  if (p == 1) return {{1}};
  std::vector<std::vector<Rank>> out;
  std::vector<Rank> prefix;
  factorize(p, max_dims, prefix, out);
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& x, const auto& y) { return x.size() < y.size(); });
  return out;
}

}  // namespace optcoll::algorithms::patterns
