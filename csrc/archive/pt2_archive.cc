// SPDX-License-Identifier: Apache-2.0
#include "csrc/archive/pt2_archive.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <new>
#include <system_error>
#include <thread>
#include <unordered_set>
#include <vector>

#include "csrc/package/file_reader.h"
#include "slimcuda/last_error.h"

namespace slimcuda {

// libzip reads the bytes through this callback source rather than zip_source_buffer so
// that we see where it reads: the first read after opening a STORED entry is at the
// entry's data, which libzip found by parsing the local header (its offset is not part of
// libzip 1.7's public API). That offset is what makes zero-copy views possible.
struct Pt2Archive::Source {
  const uint8_t* data = nullptr;
  uint64_t size = 0;
  uint64_t pos = 0;
  bool marking = false;  // record the next read's start in `marked`
  uint64_t marked = 0;
  zip_error_t error{};

  static zip_int64_t callback(void* state, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    auto* s = static_cast<Source*>(state);
    switch (cmd) {
      case ZIP_SOURCE_OPEN:
        s->pos = 0;
        return 0;
      case ZIP_SOURCE_READ: {
        const uint64_t n = std::min<uint64_t>(len, s->size - s->pos);
        if (s->marking) {
          s->marked = s->pos;
          s->marking = false;
        }
        if (n > 0) std::memcpy(data, s->data + s->pos, n);
        s->pos += n;
        return static_cast<zip_int64_t>(n);
      }
      case ZIP_SOURCE_CLOSE:
      case ZIP_SOURCE_FREE:
        return 0;
      case ZIP_SOURCE_STAT: {
        zip_stat_t* st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &s->error);
        if (st == nullptr) return -1;
        zip_stat_init(st);
        st->size = s->size;
        st->valid |= ZIP_STAT_SIZE;
        return sizeof(*st);
      }
      case ZIP_SOURCE_ERROR:
        return zip_error_to_data(&s->error, data, len);
      case ZIP_SOURCE_SEEK: {
        const zip_int64_t at = zip_source_seek_compute_offset(s->pos, s->size, data, len, &s->error);
        if (at < 0) return -1;
        s->pos = static_cast<uint64_t>(at);
        return 0;
      }
      case ZIP_SOURCE_TELL:
        return static_cast<zip_int64_t>(s->pos);
      case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                              ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
                                              ZIP_SOURCE_SUPPORTS, -1);
      default:
        zip_error_set(&s->error, ZIP_ER_OPNOTSUPP, 0);
        return -1;
    }
  }
};

namespace {

// Deflate's densest output is about 1032 bytes per compressed byte; a declared size beyond
// that cannot be real (the zip-bomb check, before any byte is inflated).
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint64_t kDeflateSlack = 1024;
constexpr size_t kChunk = 1 << 20;  // streamed decompression, per read

zip_t* zip_of(void* z) { return static_cast<zip_t*>(z); }

// Why a name is refused, or nullptr.
const char* bad_name(const std::string& n) {
  if (n.empty()) return "an empty name";
  if (n.find('\0') != std::string::npos) return "a NUL byte in its name";
  if (n.find('\\') != std::string::npos) return "a backslash in its name";
  if (n[0] == '/') return "an absolute path";
  size_t start = 0;
  for (;;) {
    const size_t end = n.find('/', start);
    const std::string_view part(n.data() + start, (end == std::string::npos ? n.size() : end) - start);
    if (part == "..") return "a '..' component (path traversal)";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return nullptr;
}

// libzip's handle of one opened entry, closed on every path.
class ZipFile {
 public:
  explicit ZipFile(zip_file_t* f) noexcept : f_(f) {}
  ZipFile(const ZipFile&) = delete;             // one owner closes
  ZipFile& operator=(const ZipFile&) = delete;  // one owner closes
  ~ZipFile() {
    if (f_ != nullptr) (void)zip_fclose(f_);
  }
  [[nodiscard]] zip_file_t* get() const noexcept { return f_; }

 private:
  zip_file_t* f_;
};

}  // namespace

bool Pt2Archive::looks_like_zip(const uint8_t* data, size_t size) noexcept {
  if (data == nullptr || size < 4) return false;
  return data[0] == 'P' && data[1] == 'K' && ((data[2] == 3 && data[3] == 4) || (data[2] == 5 && data[3] == 6));
}

Pt2Archive::~Pt2Archive() {
  if (zip_ != nullptr) zip_discard(zip_of(zip_));  // read-only: nothing to write back
  if (mapping_ != nullptr) (void)::munmap(mapping_, size_);
}

Error Pt2Archive::open(const char* path, std::unique_ptr<Pt2Archive>* out) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(path != nullptr && out != nullptr, Error::InvalidArgument, "null argument");
    int fd = -1;
    uint64_t size = 0;
    SLIMCUDA_RETURN_IF_ERROR(open_regular_file(path, &fd, &size));
    std::unique_ptr<Pt2Archive> a(new Pt2Archive());
    struct stat st {};
    if (::fstat(fd, &st) == 0) {
      a->identity_ = "file:" + std::to_string(static_cast<unsigned long long>(st.st_dev)) + ":" +
                     std::to_string(static_cast<unsigned long long>(st.st_ino)) + ":" + std::to_string(size) + ":" +
                     std::to_string(static_cast<long long>(st.st_mtim.tv_sec)) + "." +
                     std::to_string(static_cast<long long>(st.st_mtim.tv_nsec));
    }
    if (size > 0) {
      if (size > std::numeric_limits<size_t>::max()) {
        (void)::close(fd);
        return set_last_error(Error::InvalidArgument, "%s: too large to map", path);
      }
      void* m = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ, MAP_PRIVATE, fd, 0);
      const int e = errno;
      (void)::close(fd);  // the mapping keeps the file
      SLIMCUDA_CHECK_OR_RETURN(m != MAP_FAILED, e == ENOMEM ? Error::OutOfResources : Error::AccessFailed,
                               "cannot map %s: %s", path, std::strerror(e));
      a->mapping_ = m;
      a->data_ = static_cast<const uint8_t*>(m);
      a->size_ = static_cast<size_t>(size);
    } else {
      (void)::close(fd);
    }
    return open_bytes(std::move(a), out);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory opening %s", path);
  }
}

Error Pt2Archive::open_memory(const uint8_t* data, size_t size, std::unique_ptr<Pt2Archive>* out) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN((data != nullptr || size == 0) && out != nullptr, Error::InvalidArgument, "null argument");
    std::unique_ptr<Pt2Archive> a(new Pt2Archive());
    a->data_ = data;
    a->size_ = size;
    return open_bytes(std::move(a), out);
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory opening the archive");
  }
}

Error Pt2Archive::open_bytes(std::unique_ptr<Pt2Archive> a, std::unique_ptr<Pt2Archive>* out) noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(a->size_ >= 22, Error::InvalidProgram, "%zu bytes: too short for a zip archive (a .pt2)",
                             a->size_);
    a->source_ = std::make_unique<Source>();
    a->source_->data = a->data_;
    a->source_->size = a->size_;
    zip_error_init(&a->source_->error);
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* src = zip_source_function_create(&Source::callback, a->source_.get(), &error);
    if (src == nullptr) {
      const std::string why = zip_error_strerror(&error);
      zip_error_fini(&error);
      return set_last_error(Error::MemoryAllocationFailed, "libzip: %s", why.c_str());
    }
    // ZIP_CHECKCONS: libzip also compares every local header with the central directory.
    zip_t* z = zip_open_from_source(src, ZIP_RDONLY | ZIP_CHECKCONS, &error);
    if (z == nullptr) {
      zip_source_free(src);
      const std::string why = zip_error_strerror(&error);
      const int code = zip_error_code_zip(&error);
      zip_error_fini(&error);
      if (code == ZIP_ER_EXISTS) {  // libzip refuses a second entry of a name already seen
        return set_last_error(Error::InvalidProgram, "two entries of one name (libzip: %s)", why.c_str());
      }
      return set_last_error(code == ZIP_ER_MEMORY ? Error::MemoryAllocationFailed : Error::InvalidProgram,
                            "not a readable zip archive (a .pt2 is one): libzip: %s", why.c_str());
    }
    zip_error_fini(&error);
    a->zip_ = z;
    SLIMCUDA_RETURN_IF_ERROR(a->check_entries());
    *out = std::move(a);
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory opening the archive");
  }
}

Error Pt2Archive::check_entries() {
  zip_t* z = zip_of(zip_);
  const zip_int64_t n = zip_get_num_entries(z, 0);
  SLIMCUDA_CHECK_OR_RETURN(n >= 0, Error::InvalidProgram, "libzip cannot count the entries");
  SLIMCUDA_CHECK_OR_RETURN(static_cast<uint64_t>(n) <= kMaxEntries, Error::InvalidProgram, "%lld entries (at most %zu)",
                           static_cast<long long>(n), kMaxEntries);
  std::unordered_set<std::string> seen;
  entries_.reserve(static_cast<size_t>(n));
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    SLIMCUDA_CHECK_OR_RETURN(zip_stat_index(z, static_cast<zip_uint64_t>(i), ZIP_FL_ENC_RAW, &st) == 0,
                             Error::InvalidProgram, "entry %lld: libzip: %s", static_cast<long long>(i),
                             zip_strerror(z));
    const zip_uint64_t need = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    SLIMCUDA_CHECK_OR_RETURN((st.valid & need) == need && st.name != nullptr, Error::InvalidProgram,
                             "entry %lld: no name, size or method", static_cast<long long>(i));
    ArchiveEntry e;
    e.name = st.name;
    e.index = static_cast<uint64_t>(i);
    e.size = st.size;
    e.compressed_size = st.comp_size;
    e.crc32 = (st.valid & ZIP_STAT_CRC) ? st.crc : 0;
    const char* nm = e.name.c_str();
    if (const char* why = bad_name(e.name)) {
      return set_last_error(Error::InvalidProgram, "entry '%s': %s", nm, why);
    }
    SLIMCUDA_CHECK_OR_RETURN(seen.insert(e.name).second, Error::InvalidProgram, "two entries of one name: '%s'", nm);
    SLIMCUDA_CHECK_OR_RETURN(!(st.valid & ZIP_STAT_ENCRYPTION_METHOD) || st.encryption_method == ZIP_EM_NONE,
                             Error::InvalidProgram, "entry '%s' is encrypted", nm);
    SLIMCUDA_CHECK_OR_RETURN(st.comp_method == ZIP_CM_STORE || st.comp_method == ZIP_CM_DEFLATE, Error::InvalidProgram,
                             "entry '%s': compression method %u (only stored or deflate)", nm,
                             static_cast<unsigned>(st.comp_method));
    SLIMCUDA_CHECK_OR_RETURN(e.compressed_size <= size_, Error::InvalidProgram,
                             "entry '%s' declares %llu compressed bytes in a %zu-byte archive", nm,
                             static_cast<unsigned long long>(e.compressed_size), size_);
    e.stored = st.comp_method == ZIP_CM_STORE;
    if (!e.stored) {
      SLIMCUDA_CHECK_OR_RETURN(
          e.size <= e.compressed_size * kMaxDeflateRatio + kDeflateSlack, Error::InvalidProgram,
          "entry '%s' declares %llu bytes from %llu compressed: more than deflate can expand (a zip bomb)", nm,
          static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(e.compressed_size));
    } else {
      SLIMCUDA_CHECK_OR_RETURN(
          e.size == e.compressed_size, Error::InvalidProgram, "stored entry '%s' declares %llu bytes but holds %llu",
          nm, static_cast<unsigned long long>(e.size), static_cast<unsigned long long>(e.compressed_size));
    }
    SLIMCUDA_RETURN_IF_ERROR(locate(&e));
    entries_.push_back(std::move(e));
  }
  return check_disjoint();
}

Error Pt2Archive::locate(ArchiveEntry* e) {
  if (e->compressed_size == 0) return Error::Ok;
  const char* nm = e->name.c_str();
  // Where libzip reads the entry's first byte (see Source): it parsed the local header at
  // zip_fopen_index, so the next read is at the entry's data.
  zip_t* z = zip_of(zip_);
  zip_file_t* f = zip_fopen_index(z, e->index, 0);
  SLIMCUDA_CHECK_OR_RETURN(f != nullptr, Error::InvalidProgram, "entry '%s': libzip: %s", nm, zip_strerror(z));
  ZipFile file(f);
  source_->marking = true;
  uint8_t first = 0;
  const zip_int64_t got = zip_fread(f, &first, 1);
  const bool read_any = !source_->marking;
  source_->marking = false;
  if (!e->stored) {
    // A corrupt stream is reported when the entry is read (most entries never are); one
    // that read nothing has no place to compare.
    e->located = read_any && source_->marked < size_ && e->compressed_size <= size_ - source_->marked;
    if (e->located) e->data_offset = source_->marked;
    return Error::Ok;
  }
  SLIMCUDA_CHECK_OR_RETURN(got == 1, Error::InvalidProgram, "entry '%s': cannot be read: %s", nm, zip_file_strerror(f));
  e->data_offset = source_->marked;
  SLIMCUDA_CHECK_OR_RETURN(
      e->data_offset < size_ && e->size <= size_ - e->data_offset && data_[e->data_offset] == first,
      Error::InvalidProgram, "stored entry '%s': its %llu bytes do not lie inside the archive", nm,
      static_cast<unsigned long long>(e->size));
  e->located = true;
  return Error::Ok;
}

Error Pt2Archive::check_disjoint() const {
  // Entries whose bytes overlap (one nested in another, or many sharing one deflate stream)
  // let a small file make readers pay for its bytes many times over: no writer of .pt2
  // files shares bytes between entries.
  std::vector<const ArchiveEntry*> placed;
  for (const ArchiveEntry& e : entries_) {
    if (e.located) placed.push_back(&e);
  }
  std::sort(placed.begin(), placed.end(),
            [](const ArchiveEntry* a, const ArchiveEntry* b) { return a->data_offset < b->data_offset; });
  for (size_t i = 1; i < placed.size(); ++i) {
    const ArchiveEntry& a = *placed[i - 1];
    const ArchiveEntry& b = *placed[i];
    SLIMCUDA_CHECK_OR_RETURN(a.data_offset + a.compressed_size <= b.data_offset, Error::InvalidProgram,
                             "entries '%s' and '%s' overlap in the archive (bytes [%llu, +%llu) and [%llu, +%llu)): "
                             "no .pt2 shares bytes between entries",
                             a.name.c_str(), b.name.c_str(), static_cast<unsigned long long>(a.data_offset),
                             static_cast<unsigned long long>(a.compressed_size),
                             static_cast<unsigned long long>(b.data_offset),
                             static_cast<unsigned long long>(b.compressed_size));
  }
  return Error::Ok;
}

const ArchiveEntry* Pt2Archive::find(std::string_view name) const noexcept {
  for (const ArchiveEntry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

std::vector<const ArchiveEntry*> Pt2Archive::entries_under(std::string_view prefix) const {
  std::vector<const ArchiveEntry*> out;
  for (const ArchiveEntry& e : entries_) {
    if (e.name.size() >= prefix.size() && std::string_view(e.name).substr(0, prefix.size()) == prefix) {
      out.push_back(&e);
    }
  }
  return out;
}

Error Pt2Archive::view(const ArchiveEntry& entry, ArchiveSpan* out) const noexcept {
  SLIMCUDA_CHECK_OR_RETURN(out != nullptr, Error::InvalidArgument, "null out");
  SLIMCUDA_CHECK_OR_RETURN(entry.stored, Error::NotSupported,
                           "entry '%s' is compressed: no view in place (read it instead)", entry.name.c_str());
  out->data = entry.size == 0 ? data_ : data_ + entry.data_offset;
  out->size = static_cast<size_t>(entry.size);
  return Error::Ok;
}

Error Pt2Archive::stream(const ArchiveEntry& entry, uint64_t offset, uint64_t size, uint8_t* dst) const {
  std::lock_guard<std::mutex> lock(zip_mutex_);
  zip_t* z = zip_of(zip_);
  zip_file_t* f = zip_fopen_index(z, entry.index, 0);
  SLIMCUDA_CHECK_OR_RETURN(f != nullptr, Error::InvalidProgram, "entry '%s': libzip: %s", entry.name.c_str(),
                           zip_strerror(z));
  ZipFile file(f);
  std::vector<uint8_t> chunk;
  const bool whole = offset == 0 && size == entry.size;
  uint64_t at = 0;  // uncompressed position
  const uint64_t end = offset + size;
  // Read to the end of the entry when the whole entry is asked for, so that libzip checks
  // its CRC and its size (one byte more is how a stream longer than declared shows).
  while (at < end || whole) {
    uint8_t* where;
    uint64_t want;
    if (at >= offset && at < end) {
      where = dst + (at - offset);
      want = std::min<uint64_t>(end - at, kChunk);
    } else {
      if (chunk.empty()) chunk.resize(kChunk);
      where = chunk.data();
      want = at < offset ? std::min<uint64_t>(offset - at, kChunk) : 1;
    }
    const zip_int64_t n = zip_fread(f, where, want);
    if (n < 0) {
      zip_error_t* err = zip_file_get_error(f);
      const bool crc = err != nullptr && zip_error_code_zip(err) == ZIP_ER_CRC;
      return set_last_error(Error::InvalidProgram, "entry '%s': %s: %s", entry.name.c_str(),
                            crc ? "CRC mismatch" : "corrupt compressed data", zip_file_strerror(f));
    }
    if (n == 0) break;
    at += static_cast<uint64_t>(n);
    SLIMCUDA_CHECK_OR_RETURN(at <= entry.size, Error::InvalidProgram,
                             "entry '%s' inflates past its declared %llu bytes", entry.name.c_str(),
                             static_cast<unsigned long long>(entry.size));
  }
  SLIMCUDA_CHECK_OR_RETURN(at >= end && (!whole || at == entry.size), Error::InvalidProgram,
                           "entry '%s' ends after %llu of its declared %llu bytes", entry.name.c_str(),
                           static_cast<unsigned long long>(at), static_cast<unsigned long long>(entry.size));
  return Error::Ok;
}

Error Pt2Archive::read(const ArchiveEntry& entry, uint64_t offset, uint64_t size, void* dst) const noexcept {
  try {
    SLIMCUDA_CHECK_OR_RETURN(dst != nullptr || size == 0, Error::InvalidArgument, "null destination");
    SLIMCUDA_CHECK_OR_RETURN(offset <= entry.size && size <= entry.size - offset, Error::InvalidArgument,
                             "bytes [%llu, +%llu) of entry '%s', which has %llu",
                             static_cast<unsigned long long>(offset), static_cast<unsigned long long>(size),
                             entry.name.c_str(), static_cast<unsigned long long>(entry.size));
    if (size == 0) return Error::Ok;
    if (entry.stored) {
      std::memcpy(dst, data_ + entry.data_offset + offset, static_cast<size_t>(size));
      if (offset == 0 && size == entry.size) {
        SLIMCUDA_CHECK_OR_RETURN(crc32_z(0, static_cast<const Bytef*>(dst), size) == entry.crc32, Error::InvalidProgram,
                                 "entry '%s': CRC mismatch (corrupted)", entry.name.c_str());
      }
      return Error::Ok;
    }
    return stream(entry, offset, size, static_cast<uint8_t*>(dst));
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory reading '%s'", entry.name.c_str());
  }
}

// The CRC-32 of n mapped bytes. One thread checksums about 1-2 GB/s, which made the CRC the
// slowest part of loading a model with gigabytes of weights in its archive (2.7 s for 5 GiB
// on the H200 machine, where the upload itself runs at 46 GB/s): large ranges are split
// over threads (also spreading the page faults of a cold mapping) and the parts' CRCs
// combined. Falls back to one thread if threads cannot be started.
uint32_t crc32_of(const uint8_t* p, uint64_t n) noexcept {
  constexpr uint64_t kPerThread = uint64_t{64} << 20;
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t parts = std::min<uint64_t>({uint64_t{hw}, uint64_t{32}, (n + kPerThread - 1) / kPerThread});
  if (parts <= 1) return static_cast<uint32_t>(crc32_z(0, p, static_cast<z_size_t>(n)));
  const uint64_t step = (n + parts - 1) / parts;
  std::vector<uLong> crc(parts, 0);
  std::vector<std::thread> threads;
  try {
    for (uint64_t i = 1; i < parts; ++i) {
      threads.emplace_back([&, i] {
        const uint64_t lo = i * step, len = std::min(step, n - lo);
        crc[i] = crc32_z(0, p + lo, static_cast<z_size_t>(len));
      });
    }
  } catch (const std::system_error&) {
    for (std::thread& t : threads) t.join();
    return static_cast<uint32_t>(crc32_z(0, p, static_cast<z_size_t>(n)));
  }
  crc[0] = crc32_z(0, p, static_cast<z_size_t>(std::min(step, n)));
  for (std::thread& t : threads) t.join();
  uLong all = crc[0];
  for (uint64_t i = 1; i < parts; ++i) {
    const uint64_t lo = i * step, len = std::min(step, n - lo);
    all = crc32_combine(all, crc[i], static_cast<z_off_t>(len));
  }
  return static_cast<uint32_t>(all);
}

Error Pt2Archive::verify_crc(const ArchiveEntry& entry) const noexcept {
  try {
    if (entry.stored) {
      const uint8_t* p = data_ + entry.data_offset;
      SLIMCUDA_CHECK_OR_RETURN(entry.size == 0 || crc32_of(p, entry.size) == entry.crc32, Error::InvalidProgram,
                               "entry '%s': CRC mismatch (corrupted)", entry.name.c_str());
      return Error::Ok;
    }
    // Inflate to the end through a chunk buffer: libzip checks the CRC at the end.
    std::lock_guard<std::mutex> lock(zip_mutex_);
    zip_file_t* f = zip_fopen_index(zip_of(zip_), entry.index, 0);
    SLIMCUDA_CHECK_OR_RETURN(f != nullptr, Error::InvalidProgram, "entry '%s': libzip: %s", entry.name.c_str(),
                             zip_strerror(zip_of(zip_)));
    ZipFile file(f);
    std::vector<uint8_t> chunk(kChunk);
    uint64_t at = 0;
    for (;;) {
      const zip_int64_t n = zip_fread(f, chunk.data(), chunk.size());
      SLIMCUDA_CHECK_OR_RETURN(n >= 0, Error::InvalidProgram, "entry '%s': %s", entry.name.c_str(),
                               zip_file_strerror(f));
      if (n == 0) break;
      at += static_cast<uint64_t>(n);
      SLIMCUDA_CHECK_OR_RETURN(at <= entry.size, Error::InvalidProgram,
                               "entry '%s' inflates past its declared %llu bytes", entry.name.c_str(),
                               static_cast<unsigned long long>(entry.size));
    }
    SLIMCUDA_CHECK_OR_RETURN(at == entry.size, Error::InvalidProgram,
                             "entry '%s' ends after %llu of its declared %llu bytes", entry.name.c_str(),
                             static_cast<unsigned long long>(at), static_cast<unsigned long long>(entry.size));
    return Error::Ok;
  } catch (const std::bad_alloc&) {
    return set_last_error(Error::MemoryAllocationFailed, "out of host memory checking '%s'", entry.name.c_str());
  }
}

}  // namespace slimcuda
