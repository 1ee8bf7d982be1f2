// SPDX-License-Identifier: Apache-2.0
// File: `optcoll diagnose`: reads the hang reports that ranks of an MPI program write on
// stderr when a collective fails (optcoll/api/hang_report.h) and says who held the call up.
//
//   mpirun -np 8 ./app 2> app.err; optcoll diagnose app.err
//   mpirun -np 8 ./app 2>&1 | optcoll diagnose -
#include <iostream>
#include <iterator>
#include <memory>

#include "cli/commands/commands.h"
#include "cli/options.h"
#include "optcoll/api/hang_report.h"

namespace optcoll::cli {
namespace {

void run_diagnose(const std::vector<std::string>& files) {
  std::string text;
  for (const auto& file : files) {
    if (file == "-") {
      text.append(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    } else {
      text += read_file(file);
    }
    text += '\n';
  }
  std::cout << diagnose_hangs(parse_hang_reports(text));
}

}  // namespace

void add_diagnose_command(CLI::App& app) {
  auto files = std::make_shared<std::vector<std::string>>();
  auto* sub = app.add_subcommand(
      "diagnose",
      "read the hang reports ranks write on stderr when a collective fails (lines "
      "'optcoll-hang: ...') and say which rank held the call up");
  sub->add_option("files", *files, "files with the ranks' stderr (- for standard input)")
      ->required();
  sub->callback([files] { run_diagnose(*files); });
}

}  // namespace optcoll::cli
