// SPDX-License-Identifier: Apache-2.0
// File: a capped list of diagnostics, one per check, so that a badly broken schedule costs
// at most `max` formatted messages per check.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "optcoll/verify/verify.h"

namespace optcoll::verify_detail {

class DiagnosticList {
 public:
  explicit DiagnosticList(std::size_t max) : max_(max) {}

  // Whether another diagnostic fits; if not, marks the list truncated. Callers ask before
  // formatting a message.
  bool wants_more() {
    if (items_.size() < max_) return true;
    truncated_ = true;
    return false;
  }
  void add(Diagnostic diagnostic) {
    if (wants_more()) items_.push_back(std::move(diagnostic));
  }

  bool empty() const { return items_.empty(); }
  bool truncated() const { return truncated_; }
  std::vector<Diagnostic>& items() { return items_; }

 private:
  std::size_t max_;
  bool truncated_ = false;
  std::vector<Diagnostic> items_;
};

}  // namespace optcoll::verify_detail
