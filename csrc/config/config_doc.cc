// SPDX-License-Identifier: Apache-2.0
// config_doc: prints docs/configuration.md's table of settings (from the table in
// settings.cc); with --update FILE, rewrites the table between FILE's markers in place.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "csrc/config/doc.h"

int main(int argc, char** argv) {
  if (argc == 1) {
    std::fputs(slimcuda::config::markdown_table().c_str(), stdout);
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "--update") != 0) {
    std::fprintf(stderr, "usage: config_doc [--update docs/configuration.md]\n");
    return 2;
  }
  // Under `bazel run` the working directory is the runfiles tree: a relative path is the
  // workspace's.
  std::string path = argv[2];
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  if (path[0] != '/' && workspace != nullptr) path = std::string(workspace) + "/" + path;
  std::ifstream in(path);
  if (!in) {
    std::fprintf(stderr, "config_doc: cannot read %s\n", path.c_str());
    return 1;
  }
  std::stringstream doc;
  doc << in.rdbuf();
  std::string updated;
  if (!slimcuda::config::with_table(doc.str(), &updated)) {
    std::fprintf(stderr, "config_doc: %s lacks the markers %s ... %s\n", path.c_str(), slimcuda::config::kDocBegin,
                 slimcuda::config::kDocEnd);
    return 1;
  }
  std::ofstream out(path, std::ios::trunc);
  out << updated;
  if (!out) {
    std::fprintf(stderr, "config_doc: cannot write %s\n", path.c_str());
    return 1;
  }
  return 0;
}
