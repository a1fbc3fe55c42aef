// SPDX-License-Identifier: Apache-2.0
#include "csrc/tensor/layout.h"

#include <algorithm>
#include <numeric>

#include "slimcuda/last_error.h"

namespace slimcuda {

Error check_shape(int64_t ndim, const int64_t* sizes, const int64_t* strides) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(ndim >= 0, Error::InvalidArgument, "ndim %lld < 0", static_cast<long long>(ndim));
  SLIMCUDA_CHECK_OR_RETURN(ndim <= kMaxDims, Error::InvalidArgument, "ndim %lld > %lld", static_cast<long long>(ndim),
                           static_cast<long long>(kMaxDims));
  SLIMCUDA_CHECK_OR_RETURN(ndim == 0 || sizes != nullptr, Error::InvalidArgument, "null sizes with ndim %lld",
                           static_cast<long long>(ndim));
  for (int64_t d = 0; d < ndim; ++d) {
    SLIMCUDA_CHECK_OR_RETURN(sizes[d] >= 0, Error::InvalidArgument, "negative size %lld in dimension %lld",
                             static_cast<long long>(sizes[d]), static_cast<long long>(d));
    SLIMCUDA_CHECK_OR_RETURN(strides == nullptr || strides[d] >= 0, Error::InvalidArgument,
                             "negative stride %lld in dimension %lld (not supported)",
                             static_cast<long long>(strides ? strides[d] : 0), static_cast<long long>(d));
  }
  return Error::Ok;
}

Error required_elements(int64_t ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                        int64_t* out) noexcept {
  SLIMCUDA_CHECK_OR_RETURN(offset >= 0, Error::InvalidArgument, "negative storage offset %lld",
                           static_cast<long long>(offset));
  for (int64_t d = 0; d < ndim; ++d) {
    if (sizes[d] == 0) {
      *out = 0;
      return Error::Ok;
    }
  }
  // Also check that numel itself fits, so later products of sizes are safe.
  int64_t numel = 1;
  int64_t last = offset;
  int64_t contiguous = 1;
  for (int64_t d = ndim - 1; d >= 0; --d) {
    const int64_t stride = strides ? strides[d] : contiguous;
    int64_t reach = 0;
    if (__builtin_mul_overflow(sizes[d] - 1, stride, &reach) || __builtin_add_overflow(last, reach, &last) ||
        __builtin_mul_overflow(numel, sizes[d], &numel) || __builtin_mul_overflow(contiguous, sizes[d], &contiguous)) {
      return set_last_error(Error::InvalidArgument, "sizes and strides overflow int64");
    }
  }
  SLIMCUDA_CHECK_OR_RETURN(!__builtin_add_overflow(last, 1, out), Error::InvalidArgument,
                           "sizes and strides overflow int64");
  return Error::Ok;
}

Error required_bytes(int64_t ndim, const int64_t* sizes, const int64_t* strides, int64_t offset, size_t element_size,
                     int64_t* out) noexcept {
  int64_t elements = 0;
  SLIMCUDA_RETURN_IF_ERROR(required_elements(ndim, sizes, strides, offset, &elements));
  SLIMCUDA_CHECK_OR_RETURN(!__builtin_mul_overflow(elements, static_cast<int64_t>(element_size), out),
                           Error::InvalidArgument, "sizes x strides x element size overflows int64");
  return Error::Ok;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t s = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    strides[d] = s;
    s *= sizes[d] > 1 ? sizes[d] : 1;
  }
  return strides;
}

bool is_contiguous(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) noexcept {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 0) return true;
    if (sizes[d] != 1) {
      if (strides[d] != expected) return false;
      expected *= sizes[d];
    }
  }
  return true;
}

int64_t numel_of(const std::vector<int64_t>& sizes) noexcept {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool is_non_overlapping_and_dense(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const size_t n = sizes.size();
  if (n == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<size_t> perm(n);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](size_t a, size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t need = 1;
  for (size_t i : perm) {
    if (sizes[i] < 2) return true;
    if (strides[i] != need) return false;
    need *= sizes[i];
  }
  return true;
}

std::vector<int64_t> dense_strides_like(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  const size_t n = sizes.size();
  std::vector<size_t> perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = n - 1 - i;
  auto cmp = [&](size_t a, size_t b) {
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] < strides[b]) return -1;
    if (strides[a] > strides[b]) return 1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (size_t i = 1; i < n; ++i) {
    size_t d1 = i;
    for (size_t j = 1; j <= i; ++j) {
      const size_t d0 = i - j;
      const int c = cmp(perm[d0], perm[d1]);
      if (c > 0) {
        std::swap(perm[d0], perm[d1]);
        d1 = d0;
      } else if (c < 0) {
        break;
      }
    }
  }
  std::vector<int64_t> out(n);
  int64_t cur = 1;
  for (size_t i = 0; i < n; ++i) {
    out[perm[i]] = cur;
    if (sizes[perm[i]] > 1) cur *= sizes[perm[i]];
  }
  return out;
}

}  // namespace slimcuda
