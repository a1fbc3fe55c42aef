// SPDX-License-Identifier: Apache-2.0
// Pt2Archive on archives written here with libzip: entries and prefixes, zero-copy views of
// stored entries, byte ranges of stored and compressed ones (across the streaming chunks),
// CRC checks, short compressed entries, reads from several threads, open's file errors, where
// each entry's bytes lie.
#include "csrc/archive/pt2_archive.h"

#include <sys/stat.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "slimcuda/last_error.h"

namespace slimcuda::test {
namespace {

std::string tmp(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : ".") + "/" + name;
}

// Deterministic bytes that deflate compresses a little (not all alike).
std::vector<uint8_t> pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>((x >> 24) & 0x3f);
  }
  return v;
}

struct Item {
  std::string name;
  std::vector<uint8_t> bytes;
  bool deflate = false;
};

// Writes `items` with libzip (the same library reads them back).
void write_zip(const std::string& path, const std::vector<Item>& items) {
  int err = 0;
  zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
  ASSERT_NE(z, nullptr) << err;
  for (const Item& it : items) {
    zip_source_t* s = zip_source_buffer(z, it.bytes.data(), it.bytes.size(), 0);
    ASSERT_NE(s, nullptr);
    const zip_int64_t i = zip_file_add(z, it.name.c_str(), s, ZIP_FL_ENC_UTF_8);
    ASSERT_GE(i, 0) << zip_strerror(z);
    ASSERT_EQ(zip_set_file_compression(z, static_cast<zip_uint64_t>(i), it.deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0),
              0);
  }
  ASSERT_EQ(zip_close(z), 0);
}

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class ArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    items_ = {
        {"r/data/aotinductor/model/x.wrapper.so", pattern(5000, 1)},
        {"r/data/constants/w0", pattern(3 << 20, 2), true},  // 3 MiB: crosses the 1 MiB chunks
        {"r/data/constants/w1", pattern(70000, 3)},
        {"r/data/constants_other", pattern(10, 4)},
        {"r/empty", {}},
    };
    path_ = tmp("archive.pt2");
    write_zip(path_, items_);
    ASSERT_EQ(Pt2Archive::open(path_.c_str(), &archive_), Error::Ok) << last_error_message();
  }

  std::vector<Item> items_;
  std::string path_;
  std::unique_ptr<Pt2Archive> archive_;
};

TEST_F(ArchiveTest, ListsEntriesAndPrefixes) {
  ASSERT_EQ(archive_->entries().size(), items_.size());
  for (size_t i = 0; i < items_.size(); ++i) {
    const ArchiveEntry& e = archive_->entries()[i];
    EXPECT_EQ(e.name, items_[i].name);
    EXPECT_EQ(e.size, items_[i].bytes.size());
    EXPECT_EQ(e.stored, !items_[i].deflate);
    EXPECT_EQ(archive_->find(e.name), &e);
  }
  EXPECT_EQ(archive_->find("r/data/constants"), nullptr);
  const auto under = archive_->entries_under("r/data/constants/");
  ASSERT_EQ(under.size(), 2u) << "the prefix is a folder: constants_other is not under it";
  EXPECT_EQ(under[0]->name, "r/data/constants/w0");
  EXPECT_EQ(under[1]->name, "r/data/constants/w1");
  EXPECT_EQ(archive_->size(), read_file(path_).size());
}

// Every entry with bytes is placed (stored or compressed) where its bytes really are: at
// its local header's end, inside the file, the entries' ranges apart (what the overlap
// check compares; testdata/hostile_pt2.json has an archive it refuses).
TEST_F(ArchiveTest, PlacesEveryEntrysBytesApart) {
  const std::vector<uint8_t> file = read_file(path_);
  uint64_t end_of_previous = 0;
  for (const ArchiveEntry& e : archive_->entries()) {
    SCOPED_TRACE(e.name);
    if (e.compressed_size == 0) {
      EXPECT_FALSE(e.located);
      continue;
    }
    ASSERT_TRUE(e.located);
    ASSERT_LE(e.data_offset + e.compressed_size, file.size());
    EXPECT_GE(e.data_offset, end_of_previous + 30 + e.name.size()) << "after the previous entry and its own header";
    end_of_previous = e.data_offset + e.compressed_size;
  }
}

TEST_F(ArchiveTest, ViewsStoredEntriesInPlace) {
  const ArchiveEntry* so = archive_->find(items_[0].name);
  ASSERT_NE(so, nullptr);
  ArchiveSpan span;
  ASSERT_EQ(archive_->view(*so, &span), Error::Ok);
  ASSERT_EQ(span.size, items_[0].bytes.size());
  EXPECT_EQ(std::memcmp(span.data, items_[0].bytes.data(), span.size), 0);
  // Zero-copy: over bytes in memory, the view is a pointer into them at the entry's offset.
  const std::vector<uint8_t> file = read_file(path_);
  EXPECT_EQ(std::memcmp(file.data() + so->data_offset, items_[0].bytes.data(), span.size), 0);
  std::unique_ptr<Pt2Archive> in_memory;
  ASSERT_EQ(Pt2Archive::open_memory(file.data(), file.size(), &in_memory), Error::Ok);
  ArchiveSpan borrowed;
  ASSERT_EQ(in_memory->view(*in_memory->find(items_[0].name), &borrowed), Error::Ok);
  EXPECT_EQ(borrowed.data, file.data() + so->data_offset);
  EXPECT_EQ(archive_->verify_crc(*so), Error::Ok);

  ArchiveSpan none;
  EXPECT_EQ(archive_->view(*archive_->find("r/data/constants/w0"), &none), Error::NotSupported);
  EXPECT_NE(std::string(last_error_message()).find("is compressed"), std::string::npos);
  ArchiveSpan empty;
  ASSERT_EQ(archive_->view(*archive_->find("r/empty"), &empty), Error::Ok);
  EXPECT_EQ(empty.size, 0u);
}

TEST_F(ArchiveTest, ReadsByteRanges) {
  for (size_t k : {size_t{0}, size_t{1}, size_t{2}}) {
    const Item& it = items_[k];
    const ArchiveEntry& e = *archive_->find(it.name);
    SCOPED_TRACE(it.name);
    const uint64_t n = it.bytes.size();
    // Whole, head, tail, a middle range across a chunk boundary, one byte at the end.
    const std::pair<uint64_t, uint64_t> ranges[] = {{0, n},
                                                    {0, 17},
                                                    {n - 300, 300},
                                                    {n / 3, n / 3 + 1},
                                                    {(1u << 20) % n, std::min<uint64_t>(4096, n - (1u << 20) % n)},
                                                    {n - 1, 1}};
    for (const auto& [offset, size] : ranges) {
      std::vector<uint8_t> got(size, 0xAB);
      ASSERT_EQ(archive_->read(e, offset, size, got.data()), Error::Ok) << last_error_message();
      EXPECT_EQ(std::memcmp(got.data(), it.bytes.data() + offset, size), 0) << offset << "+" << size;
    }
    uint8_t b = 0;
    EXPECT_EQ(archive_->read(e, n, 1, &b), Error::InvalidArgument);
    EXPECT_EQ(archive_->read(e, 1, n, &b), Error::InvalidArgument);
    EXPECT_EQ(archive_->read(e, ~uint64_t{0}, 2, &b), Error::InvalidArgument) << "offset + size overflows";
    EXPECT_EQ(archive_->read(e, 0, 0, nullptr), Error::Ok);
    EXPECT_EQ(archive_->verify_crc(e), Error::Ok);
  }
}

// Readers on several threads share one archive (compressed reads take its lock).
TEST_F(ArchiveTest, ReadsFromManyThreads) {
  const ArchiveEntry& w0 = *archive_->find("r/data/constants/w0");
  const ArchiveEntry& w1 = *archive_->find("r/data/constants/w1");
  std::vector<std::thread> threads;
  std::vector<int> ok(8, 0);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      const ArchiveEntry& e = t % 2 ? w0 : w1;
      const std::vector<uint8_t>& want = items_[t % 2 ? 1 : 2].bytes;
      const uint64_t offset = (static_cast<uint64_t>(t) * 7919) % (e.size / 2);
      std::vector<uint8_t> got(e.size / 2);
      ok[t] = archive_->read(e, offset, got.size(), got.data()) == Error::Ok &&
              std::memcmp(got.data(), want.data() + offset, got.size()) == 0;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 8; ++t) EXPECT_EQ(ok[t], 1) << "thread " << t;
}

TEST(Archive, DetectsCorruptedStoredBytes) {
  const std::vector<uint8_t> bytes = pattern(4096, 9);
  const std::string path = tmp("corrupt.pt2");
  write_zip(path, {{"r/w", bytes}});
  std::vector<uint8_t> file = read_file(path);
  std::unique_ptr<Pt2Archive> a;
  ASSERT_EQ(Pt2Archive::open_memory(file.data(), file.size(), &a), Error::Ok);
  const uint64_t at = a->entries()[0].data_offset + 100;
  a.reset();
  file[at] ^= 0x40;
  ASSERT_EQ(Pt2Archive::open_memory(file.data(), file.size(), &a), Error::Ok) << "the structure is intact";
  EXPECT_EQ(a->verify_crc(a->entries()[0]), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("CRC mismatch"), std::string::npos);
  std::vector<uint8_t> whole(bytes.size());
  EXPECT_EQ(a->read(a->entries()[0], 0, whole.size(), whole.data()), Error::InvalidProgram)
      << "a whole-entry read checks the CRC";
  uint8_t part[10];
  EXPECT_EQ(a->read(a->entries()[0], 0, sizeof part, part), Error::Ok) << "a range read does not";
}

// A weights entry shorter than it declares: reading past its real end is InvalidProgram.
TEST(Archive, CompressedEntryShorterThanDeclared) {
  const std::vector<uint8_t> bytes = pattern(20000, 5);
  const std::string path = tmp("short.pt2");
  write_zip(path, {{"r/data/constants/w", bytes, true}});
  std::vector<uint8_t> file = read_file(path);
  // Declare 1000 more bytes in the local and the central header (the zip-bomb bound allows it).
  const uint32_t real = static_cast<uint32_t>(bytes.size()), claimed = real + 1000;
  int patched = 0;
  for (size_t i = 0; i + 4 <= file.size(); ++i) {
    const bool local = std::memcmp(&file[i], "PK\x03\x04", 4) == 0,
               central = std::memcmp(&file[i], "PK\x01\x02", 4) == 0;
    if (!local && !central) continue;
    const size_t at = i + (local ? 22 : 24);
    uint32_t v;
    std::memcpy(&v, &file[at], 4);
    ASSERT_EQ(v, real);
    std::memcpy(&file[at], &claimed, 4);
    ++patched;
  }
  ASSERT_EQ(patched, 2);
  std::unique_ptr<Pt2Archive> a;
  ASSERT_EQ(Pt2Archive::open_memory(file.data(), file.size(), &a), Error::Ok) << last_error_message();
  const ArchiveEntry& e = a->entries()[0];
  EXPECT_EQ(e.size, claimed);
  std::vector<uint8_t> got(claimed);
  EXPECT_EQ(a->read(e, 0, 100, got.data()), Error::Ok) << "bytes that exist read";
  EXPECT_EQ(a->read(e, real - 10, 20, got.data()), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("ends after 20000 of its declared 21000 bytes"), std::string::npos)
      << last_error_message();
  EXPECT_EQ(a->read(e, 0, claimed, got.data()), Error::InvalidProgram);
  EXPECT_EQ(a->verify_crc(e), Error::InvalidProgram);
}

TEST(Archive, OpenReportsFileErrors) {
  std::unique_ptr<Pt2Archive> a;
  EXPECT_EQ(Pt2Archive::open(tmp("missing.pt2").c_str(), &a), Error::NotFound);
  EXPECT_NE(std::string(last_error_message()).find("No such file or directory"), std::string::npos);
  const std::string dir = tmp("a_directory");
  ASSERT_EQ(mkdir(dir.c_str(), 0700), 0);
  EXPECT_EQ(Pt2Archive::open(dir.c_str(), &a), Error::InvalidArgument);
  EXPECT_NE(std::string(last_error_message()).find("is not a regular file (directory)"), std::string::npos);
  const std::string empty = tmp("empty.pt2");
  std::ofstream(empty).close();
  EXPECT_EQ(Pt2Archive::open(empty.c_str(), &a), Error::InvalidProgram);
  EXPECT_NE(std::string(last_error_message()).find("too short for a zip archive"), std::string::npos);
  EXPECT_EQ(Pt2Archive::open(nullptr, &a), Error::InvalidArgument);
  EXPECT_EQ(Pt2Archive::open_memory(nullptr, 10, &a), Error::InvalidArgument);
  EXPECT_EQ(a, nullptr);
}

TEST(Archive, RecognisesZipSignatures) {
  const uint8_t local[] = {'P', 'K', 3, 4}, end[] = {'P', 'K', 5, 6}, package[] = {0x10, 0, 0, 0};
  EXPECT_TRUE(Pt2Archive::looks_like_zip(local, 4));
  EXPECT_TRUE(Pt2Archive::looks_like_zip(end, 4));
  EXPECT_FALSE(Pt2Archive::looks_like_zip(package, 4));
  EXPECT_FALSE(Pt2Archive::looks_like_zip(local, 3));
  EXPECT_FALSE(Pt2Archive::looks_like_zip(nullptr, 4));
}

// The parallel CRC equals zlib's one-pass CRC, for sizes that split unevenly too.
TEST(Archive, ParallelCrcEqualsOnePass) {
  std::vector<uint8_t> bytes((size_t{300} << 20) + 12345);
  uint64_t x = 88172645463325252ull;
  for (uint8_t& b : bytes) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  for (uint64_t n : {uint64_t{0}, uint64_t{1}, uint64_t{64} << 20, static_cast<uint64_t>(bytes.size())}) {
    EXPECT_EQ(crc32_of(bytes.data(), n), static_cast<uint32_t>(crc32_z(0, bytes.data(), static_cast<z_size_t>(n))))
        << n << " bytes";
  }
}

}  // namespace
}  // namespace slimcuda::test
