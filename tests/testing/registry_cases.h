// SPDX-License-Identifier: Apache-2.0
// File: the registry-driven test grid (docs/design.md, Command line and tests): every registry
// algorithm x rank counts x roots x count patterns, as CollectiveSpecs, with readable test names
// ("gatherv_binomial_p7_root3_irregular").
#pragma once

#include <cstdint>
#include <cstdlib>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "optcoll/algorithms/registry.h"
#include "optcoll/model/collective.h"

namespace optcoll::testing {

enum class CountPattern { kZero, kOne, kFive, kThousand, kIrregular };

struct RegistryCase {
  const algorithms::AlgorithmInfo* algorithm = nullptr;
  CollectiveSpec spec;
  std::string name;  // gtest-safe
};

// The grid: p in {1,2,3,4,5,7,8,11,16,17,31,32,33,64}.
inline const std::vector<Rank>& full_rank_grid() {
  static const std::vector<Rank> grid{1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 31, 32, 33, 64};
  return grid;
}

// Sanitizer builds (OPTCOLL_SANITIZED_BUILD, set by tests/CMakeLists.txt) run the executor
// suite on a lighter grid — no 31, 32, 64, and thinned count patterns above p = 17 — to keep
// the test command under its time budget; the release build runs the full grid. Memory and
// threading errors show at these sizes as well.
#ifdef OPTCOLL_SANITIZED_BUILD
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
// ThreadSanitizer (OPTCOLL_THREAD_SANITIZED_BUILD), about 7x slower than AddressSanitizer on it,
// runs the executor suite at 1, the primes 2, 3 and 5, and 8: the executor's and transport's
// cases (one rank, a pair, odd and even worlds, fibers where ranks outnumber the cores) at a
// fraction of the light grid's cost (under it exec_test took 838 s, most of the TSan stage's
// 988; p = 17 was a fifth of what was left).
#ifdef OPTCOLL_THREAD_SANITIZED_BUILD
inline constexpr bool kThreadSanitizedBuild = true;
#else
inline constexpr bool kThreadSanitizedBuild = false;
#endif
// The randomized equivalence tests (two programs, one answer, over many random instances) and
// the grids of every pair (compose_exec_test) run every trial in the release build and about
// one in four under the sanitizers, picked by a hash of the trial's index: a stride would alias
// with the trials' own cycles of sizes and kinds (trial % 40, % 6, % 7, ...), and a prefix would
// keep only the first sizes.
inline bool run_trial(int trial) {
  if (!kSanitizedBuild) return true;
  return (static_cast<std::uint32_t>(trial) * 2654435761U) >> 30 == 0;  // Knuth's multiplier
}

inline const std::vector<Rank>& exec_rank_grid() {
  static const std::vector<Rank> light{1, 2, 3, 4, 5, 7, 8, 11, 16, 17, 33};
  static const std::vector<Rank> threads{1, 2, 3, 5, 8};
  if (kThreadSanitizedBuild) return threads;
  return kSanitizedBuild ? light : full_rank_grid();
}

inline std::string pattern_name(CountPattern pattern) {
  switch (pattern) {
    case CountPattern::kZero:
      return "n0";
    case CountPattern::kOne:
      return "n1";
    case CountPattern::kFive:
      return "n5";
    case CountPattern::kThousand:
      return "n1000";
    case CountPattern::kIrregular:
      return "irregular";
  }
  return "n?";
}

// Irregular counts with zeros, deterministic in (p, i): 0, 3, 0, 7, 1, 0, 12, ...
inline Count irregular_count(Rank p, std::size_t i) {
  const auto h = (i * 2654435761u + static_cast<std::size_t>(p) * 40503u) % 17;
  return h < 5 ? 0 : static_cast<Count>(h * h % 23);
}

// The spec for one grid point; the pattern applies to the uniform count or to every entry
// of the counts (v-variants; alltoallv: the p x p matrix).
inline CollectiveSpec grid_spec(CollectiveKind kind, Rank p, Rank root, CountPattern pattern,
                                bool commutative = true) {
  CollectiveSpec spec;
  spec.kind = kind;
  spec.nranks = p;
  spec.root = is_rooted(kind) ? root : 0;
  spec.commutative = commutative;
  if (kind == CollectiveKind::kBarrier) return spec;
  auto value = [&](std::size_t i) -> Count {
    switch (pattern) {
      case CountPattern::kZero:
        return 0;
      case CountPattern::kOne:
        return 1;
      case CountPattern::kFive:
        return 5;
      case CountPattern::kThousand:
        return 1000;
      case CountPattern::kIrregular:
        return irregular_count(p, i);
    }
    return 0;
  };
  if (takes_counts(kind)) {
    const std::size_t n = kind == CollectiveKind::kAlltoallv
                              ? static_cast<std::size_t>(p) * static_cast<std::size_t>(p)
                              : static_cast<std::size_t>(p);
    for (std::size_t i = 0; i < n; ++i) spec.counts.push_back(value(i));
  } else {
    // A uniform count cannot be irregular; use a count not divisible by most p.
    spec.count = pattern == CountPattern::kIrregular ? 37 : value(0);
  }
  return spec;
}

// The specs of `kind` at p that the selection tests plan: roots 0 and p/2, every count
// pattern up to p = 17 and {0, 5, irregular} above (registry_cases()' thinning), both
// operators for reductions, and reproducible reductions at p = 5 and 8.
inline std::vector<CollectiveSpec> kind_grid_specs(CollectiveKind kind, Rank p) {
  std::vector<CollectiveSpec> specs;
  std::vector<Rank> roots{0};
  if (is_rooted(kind) && p / 2 != 0) roots.push_back(p / 2);
  const std::vector<CountPattern> patterns =
      kind == CollectiveKind::kBarrier ? std::vector<CountPattern>{CountPattern::kZero}
      : p > 17
          ? std::vector<CountPattern>{CountPattern::kZero, CountPattern::kFive,
                                      CountPattern::kIrregular}
          : std::vector<CountPattern>{CountPattern::kZero, CountPattern::kOne, CountPattern::kFive,
                                      CountPattern::kThousand, CountPattern::kIrregular};
  for (const Rank root : roots) {
    for (const auto pattern : patterns) {
      for (const bool commutative : {true, false}) {
        if (!commutative && !is_reduction(kind)) continue;
        specs.push_back(grid_spec(kind, p, root, pattern, commutative));
        if (is_reduction(kind) && commutative && (p == 5 || p == 8)) {
          specs.push_back(specs.back());
          specs.back().reproducible = true;
        }
      }
    }
  }
  return specs;
}

// One algorithm's applicable (p, root, pattern) combinations, appended to `cases`. Roots: 0,
// p/2, p-1 for rooted kinds; patterns are thinned for large p to keep the suite's time in check
// when `thin_large` is set (all patterns up to p = 17; {0, 5, irregular} above).
inline void append_registry_cases(const algorithms::AlgorithmInfo& info,
                                  const std::vector<Rank>& ranks, bool thin_large,
                                  bool include_noncommutative, std::vector<RegistryCase>& cases) {
  const std::vector<CountPattern> all{CountPattern::kZero, CountPattern::kOne, CountPattern::kFive,
                                      CountPattern::kThousand, CountPattern::kIrregular};
  const std::vector<CountPattern> thin{CountPattern::kZero, CountPattern::kFive,
                                       CountPattern::kIrregular};
  for (const Rank p : ranks) {
    std::vector<Rank> roots{0};
    if (is_rooted(info.collective)) {
      if (p / 2 != 0) roots.push_back(p / 2);
      if (p - 1 != p / 2 && p - 1 != 0) roots.push_back(p - 1);
    }
    const auto& patterns = (thin_large && p > 17) ? thin : all;
    for (const Rank root : roots) {
      for (const auto pattern : patterns) {
        if (info.collective == CollectiveKind::kBarrier && pattern != CountPattern::kZero) continue;
        for (const auto& [commutative, reproducible] :
             {std::pair{true, false}, std::pair{false, false}, std::pair{true, true},
              std::pair{false, true}}) {
          if (!commutative && (!include_noncommutative || !is_reduction(info.collective))) continue;
          // Reproducible specs: the algorithms that support them (others refuse them).
          if (reproducible && !algorithms::combines_in_fixed_order(info)) continue;
          RegistryCase c;
          c.algorithm = &info;
          c.spec = grid_spec(info.collective, p, root, pattern, commutative);
          c.spec.reproducible = reproducible;
          if (algorithms::why_not(info, c.spec, algorithms::resolve_params(info, {}))) continue;
          std::string name = std::string(info.name);
          for (auto& ch : name)
            if (ch == '/') ch = '_';
          name += "_p" + std::to_string(p);
          if (is_rooted(info.collective)) name += "_root" + std::to_string(root);
          if (info.collective != CollectiveKind::kBarrier) name += "_" + pattern_name(pattern);
          if (!commutative) name += "_noncomm";
          if (reproducible) name += "_repro";
          c.name = name;
          cases.push_back(std::move(c));
        }
      }
    }
  }
}

// Every applicable (algorithm, p, root, pattern) combination (append_registry_cases).
inline std::vector<RegistryCase> registry_cases(const std::vector<Rank>& ranks,
                                                bool thin_large = true,
                                                bool include_noncommutative = true) {
  std::vector<RegistryCase> cases;
  for (const auto& info : algorithms::all_algorithms())
    append_registry_cases(info, ranks, thin_large, include_noncommutative, cases);
  return cases;
}

// The registry algorithm whose cases this process registers: the one OPTCOLL_TEST_ALGORITHM
// names ("allreduce/ring"), or every algorithm where it is unset. The release build runs a
// registry-driven binary as one ctest test per algorithm (tests/CMakeLists.txt, BY_ALGORITHM)
// and sets it beside that test's gtest filter: gtest registers every case of a binary before it
// filters, and registering exec_test's 47,000 cases took most of each of its 135 processes'
// start. A name that is not in the registry is an error, not a process that runs nothing.
inline const algorithms::AlgorithmInfo* registered_algorithm() {
  static const algorithms::AlgorithmInfo* const only = [] {
    const char* name = std::getenv("OPTCOLL_TEST_ALGORITHM");
    if (name == nullptr || *name == '\0')
      return static_cast<const algorithms::AlgorithmInfo*>(nullptr);
    for (const auto& info : algorithms::all_algorithms()) {
      if (info.name == name) return &info;
    }
    throw std::invalid_argument(std::string("OPTCOLL_TEST_ALGORITHM=") + name +
                                " names no registry algorithm");
  }();
  return only;
}

// registry_cases() of the algorithms this process registers (registered_algorithm()): what
// the registry suites' INSTANTIATE_TEST_SUITE_P take. Tests that loop over the registry in
// their body take registry_cases() and see every algorithm.
inline std::vector<RegistryCase> registered_cases(const std::vector<Rank>& ranks,
                                                  bool thin_large = true,
                                                  bool include_noncommutative = true) {
  const algorithms::AlgorithmInfo* only = registered_algorithm();
  if (only == nullptr) return registry_cases(ranks, thin_large, include_noncommutative);
  std::vector<RegistryCase> cases;
  append_registry_cases(*only, ranks, thin_large, include_noncommutative, cases);
  return cases;
}

// gtest records each case's parameter as text; without this it prints the case's bytes, most
// of the registration time of a binary with thousands of cases.
inline void PrintTo(const RegistryCase& c, std::ostream* out) { *out << c.name; }

// For INSTANTIATE_TEST_SUITE_P(..., ::testing::ValuesIn(registry_cases(...)), case_name).
inline std::string case_name(const ::testing::TestParamInfo<RegistryCase>& param_info) {
  return param_info.param.name;
}

}  // namespace optcoll::testing
