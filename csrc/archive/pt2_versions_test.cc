// SPDX-License-Identifier: Apache-2.0
// What slimcuda knows of PyTorch's versions: the archive's version records (archive_version,
// .data/version) in archives written here with libzip, and the container C ABI as a wrapper
// source defines it (the spellings PyTorch 2.11 to 2.15 use, another parameter list, comments
// inside the list, a list without an end). Real exports of each version: pt2_versions.json.
#include "csrc/archive/pt2_versions.h"

#include <zip.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "slimcuda/last_error.h"

namespace slimcuda::test {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + name;
}

// An archive holding `records` (name, bytes) beside one model folder; returns it open.
std::unique_ptr<Pt2Archive> archive_with(const std::vector<std::pair<std::string, std::string>>& records) {
  const std::string path = tmp("versions.pt2");
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  EXPECT_NE(z, nullptr) << err;
  std::vector<std::pair<std::string, std::string>> items = records;
  items.emplace_back("m/data/aotinductor/model/c.wrapper.so", "not read here");
  for (const auto& [name, bytes] : items) {
    zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
    const zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_ENC_UTF_8);
    EXPECT_GE(i, 0) << zip_strerror(z);
    EXPECT_EQ(zip_set_file_compression(z, static_cast<zip_uint64_t>(i), ZIP_CM_STORE, 0), 0);
  }
  EXPECT_EQ(zip_close(z), 0);
  std::unique_ptr<Pt2Archive> a;
  EXPECT_EQ(Pt2Archive::open(path.c_str(), &a), Error::Ok) << last_error_message();
  return a;
}

Error check(const std::vector<std::pair<std::string, std::string>>& records) {
  const std::unique_ptr<Pt2Archive> a = archive_with(records);
  Pt2Model m;
  m.folder = "m/data/aotinductor/model/";
  return check_pt2_versions(*a, m);
}

bool says(const std::string& part) { return std::string(last_error_message()).find(part) != std::string::npos; }

TEST(Pt2Versions, RecordsOfKnownVersionsPass) {
  EXPECT_EQ(check({{"m/archive_version", "0"}, {"m/.data/version", "6\n"}}), Error::Ok) << last_error_message();
  EXPECT_EQ(check({{"m/.data/version", "3\n"}}), Error::Ok) << "an older record format reads the same way";
  EXPECT_EQ(check({}), Error::Ok) << "records the archive lacks are not checked";
}

TEST(Pt2Versions, NewerArchiveVersionNamesBoth) {
  EXPECT_EQ(check({{"m/archive_version", "1"}}), Error::NotSupported);
  EXPECT_TRUE(says("archive_version 1; slimcuda reads archive_version 0")) << last_error_message();
  EXPECT_TRUE(says(std::string("PyTorch ") + kOldestPyTorch + " to " + kNewestPyTorch)) << last_error_message();
}

TEST(Pt2Versions, NewerDataVersionNamesBoth) {
  EXPECT_EQ(check({{"m/archive_version", "0"}, {"m/.data/version", "7\n"}}), Error::NotSupported);
  EXPECT_TRUE(says(".data/version 7; slimcuda reads .data/version up to 6")) << last_error_message();
}

TEST(Pt2Versions, RecordsThatAreNoNumberAreInvalid) {
  EXPECT_EQ(check({{"m/archive_version", "zero"}}), Error::InvalidProgram);
  EXPECT_TRUE(says("m/archive_version holds 'zero', not a version number")) << last_error_message();
  EXPECT_EQ(check({{"m/.data/version", ""}}), Error::InvalidProgram);
  EXPECT_EQ(check({{"m/.data/version", "-1"}}), Error::InvalidProgram);
  EXPECT_EQ(check({{"m/.data/version", "99999999999999999999"}}), Error::InvalidProgram);
  EXPECT_EQ(check({{"m/archive_version", std::string(64, '0')}}), Error::InvalidProgram);
  EXPECT_TRUE(says("64 bytes, not a version number")) << last_error_message();
}

TEST(Pt2Versions, RecordsOfAnotherRootAreNotThisModels) {
  EXPECT_EQ(check({{"other/archive_version", "5"}, {"m/archive_version", "0"}}), Error::Ok) << last_error_message();
}

// AOTInductorModelContainerRun as PyTorch 2.11 to 2.15 define it (clang-formatted, with the
// comments their source has inside the list).
constexpr const char* kRun = R"(
AOTIRuntimeError AOTInductorModelContainerRun(
    AOTInductorModelContainerHandle container_handle,
    AtenTensorHandle* input_handles, // array of input AtenTensorHandle; handles
                                     // are stolen; the array itself is borrowed
    size_t num_inputs,
    AtenTensorHandle*
        output_handles, // array for writing output AtenTensorHandle; handles
                        // will be stolen by the caller; the array itself is
                        // borrowed
    size_t num_outputs,
    AOTInductorStreamHandle stream_handle,
    AOTIProxyExecutorHandle proxy_executor_handle) AOTI_RUNTIME_TRY({
  return AOTI_RUNTIME_SUCCESS;
})
)";

TEST(Pt2Versions, KnownContainerAbiPasses) {
  EXPECT_EQ(check_container_abi(kRun), Error::Ok) << last_error_message();
  EXPECT_EQ(check_container_abi(""), Error::Ok) << "no source: nothing to compare";
  // Other spellings of the same types; a call (not a definition) is not compared.
  EXPECT_EQ(check_container_abi("AOTIRuntimeError  AOTInductorModelContainerGetNumInputs (\n"
                                "  AOTInductorModelContainerHandle h, /* the container ) */ size_t *n) {}\n"
                                "  AOTInductorModelContainerGetNumInputs(h, x, y);\n"
                                "  MyAOTIRuntimeError AOTInductorModelContainerDelete(int x);\n"),
            Error::Ok)
      << last_error_message();
}

TEST(Pt2Versions, OtherContainerAbiNamesBothLists) {
  std::string changed = kRun;
  changed.replace(changed.find("    size_t num_outputs,"), 23, "    size_t num_outputs, int64_t flags,");
  EXPECT_EQ(check_container_abi(changed), Error::NotSupported);
  EXPECT_TRUE(
      says("its AOTInductorModelContainerRun takes (AOTInductorModelContainerHandle, AtenTensorHandle*, "
           "size_t, AtenTensorHandle*, size_t, int64_t, AOTInductorStreamHandle, AOTIProxyExecutorHandle)"))
      << last_error_message();
  EXPECT_TRUE(
      says("calls it as PyTorch 2.11 to 2.15 define it, (AOTInductorModelContainerHandle, AtenTensorHandle*, "
           "size_t, AtenTensorHandle*, size_t, AOTInductorStreamHandle, AOTIProxyExecutorHandle)"))
      << last_error_message();
  EXPECT_EQ(check_container_abi("AOTIRuntimeError AOTInductorModelContainerDelete(void) {}"), Error::NotSupported)
      << "no handle at all";
  EXPECT_EQ(check_container_abi("AOTIRuntimeError AOTInductorModelContainerGetNumInputs(\n"
                                "    AOTInductorModelContainerHandle h, int32_t* n) {}"),
            Error::NotSupported);
  EXPECT_TRUE(says("takes (AOTInductorModelContainerHandle, int32_t*)")) << last_error_message();
}

TEST(Pt2Versions, UnendedParameterListIsInvalid) {
  EXPECT_EQ(check_container_abi("AOTIRuntimeError AOTInductorModelContainerDelete(\n  AOTInductorModelContainerHandle"),
            Error::InvalidProgram);
  EXPECT_EQ(check_container_abi("AOTIRuntimeError AOTInductorModelContainerDelete( // no end"), Error::InvalidProgram);
  EXPECT_EQ(check_container_abi("AOTIRuntimeError AOTInductorModelContainerDelete( /* no end"), Error::InvalidProgram);
  EXPECT_TRUE(says("has no end to its parameter list")) << last_error_message();
}

}  // namespace
}  // namespace slimcuda::test
