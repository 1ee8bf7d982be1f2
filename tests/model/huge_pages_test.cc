// SPDX-License-Identifier: Apache-2.0
// File: large arrays advised for transparent huge pages (optcoll/model/huge_pages.h): the
// kernel marks the advised range of the mapping (VmFlags "hg" in /proc/self/smaps), the
// array keeps its values, and a small array or one with room enough is left alone.
#include "optcoll/model/huge_pages.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace optcoll {
namespace {

// The VmFlags of the mapping of this process that holds `address`, or "" if none does.
std::string vm_flags_at(const void* address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    char dash = 0;
    std::istringstream range(line);
    if (range >> std::hex >> begin >> dash >> end && dash == '-' &&
        line.find(':') > line.find(' ')) {
      inside = begin <= at && at < end;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool kernel_has_transparent_huge_pages() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  return std::getline(enabled, modes) && modes.find("[never]") == std::string::npos;
}

TEST(HugePages, ALargeArrayIsAdvisedBeforeItIsWritten) {
  if (!kernel_has_transparent_huge_pages()) GTEST_SKIP() << "no transparent huge pages here";
  std::vector<std::uint64_t> array;
  const std::size_t n = (std::size_t{64} << 20) / sizeof(std::uint64_t);
  reserve_on_huge_pages(array, n);
  ASSERT_GE(array.capacity(), n);
  const std::uint64_t* storage = array.data();
  // A point 4 MiB in lies in a whole 2 MiB page of the array, which the advice covers.
  const std::string flags = vm_flags_at(storage + (std::size_t{4} << 20) / sizeof(std::uint64_t));
  ASSERT_FALSE(flags.empty()) << "no mapping holds the array";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  array.resize(n);
  for (std::size_t i = 0; i < n; i += 4096) array[i] = i;
  EXPECT_EQ(array.data(), storage);  // the resize wrote into the advised storage
  for (std::size_t i = 0; i < n; i += 4096) ASSERT_EQ(array[i], i);
}

TEST(HugePages, SmallArraysAndArraysWithRoomAreLeftAlone) {
  std::vector<std::uint32_t> small;
  reserve_on_huge_pages(small, 1000);
  EXPECT_GE(small.capacity(), 1000u);
  std::vector<std::uint32_t> roomy;
  roomy.reserve(5000);
  const std::uint32_t* storage = roomy.data();
  reserve_on_huge_pages(roomy, 4000);
  EXPECT_EQ(roomy.data(), storage);  // no new storage: nothing to advise
  EXPECT_EQ(roomy.capacity(), 5000u);
}

TEST(HugePages, AdviceOnARangeWithoutAWholeHugePageDoesNothing) {
  std::vector<char> bytes(4096);
  advise_huge_pages(bytes.data(), bytes.size());  // no whole 2 MiB page inside: no call
  advise_huge_pages(nullptr, 0);
  EXPECT_EQ(bytes.size(), 4096u);
}

}  // namespace
}  // namespace optcoll
