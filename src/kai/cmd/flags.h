#pragma once
// Flags several commands share, declared once.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace kai::cli {

// -f/--filename: a manifest file or directory, one per use (`-f a.yaml -f dir/`), as kubectl's;
// a value after the first is a positional argument of the command, not another file.
inline CLI::Option* AddFilesOption(CLI::App* c, std::vector<std::string>& files,
                                   const std::string& what = "manifest file or directory") {
  return c->add_option("-f,--filename", files, what + " (repeatable: one per -f)")
      ->allow_extra_args(false);
}

}  // namespace kai::cli
