// SPDX-License-Identifier: Apache-2.0
// docs/configuration.md holds exactly the table config_doc generates from settings.cc.
#include <gtest/gtest.h>

#include <string>

#include "csrc/config/doc.h"

extern const char kConfigurationMd[];  // configuration_md.cc, generated from the file

namespace slimcuda::testing {
namespace {

TEST(ConfigurationDoc, HoldsTheTableOfSettings) {
  const std::string doc = kConfigurationMd;
  std::string regenerated;
  ASSERT_TRUE(config::with_table(doc, &regenerated))
      << "docs/configuration.md lacks the markers " << config::kDocBegin << " ... " << config::kDocEnd;
  EXPECT_EQ(doc, regenerated)
      << "docs/configuration.md's table differs from csrc/config/settings.cc's; update it with\n"
         "  bazel run //csrc/config:config_doc -- --update docs/configuration.md";
}

TEST(ConfigurationDoc, EveryRowNamesItsSetting) {
  const std::string table = config::markdown_table();
  EXPECT_NE(table.find("| `SLIMCUDA_CACHING_ALLOCATOR` | bool | `1` | once |"), std::string::npos) << table;
  EXPECT_NE(table.find("| `SLIMCUDA_CONV` | one of `legacy`, `frontend`, `auto` | `auto` | each use |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| `SLIMCUDA_STAGING_THREADS` | integer | min(8, hardware threads) | each use |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("| `SLIMCUDA_CUDNN_LIBRARY` | path | none | once |"), std::string::npos) << table;
}

TEST(ConfigurationDoc, MarkersMissingOrOutOfOrder) {
  std::string out = "unchanged";
  EXPECT_FALSE(config::with_table("no markers here", &out));
  EXPECT_FALSE(config::with_table(std::string(config::kDocEnd) + "\n" + config::kDocBegin + "\n", &out));
  EXPECT_EQ(out, "unchanged");
}

}  // namespace
}  // namespace slimcuda::testing
