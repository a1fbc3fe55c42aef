// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <cassert>
#include <type_traits>
#include <utility>

#include "slimcuda/error.h"

namespace slimcuda {

/// A value or an Error, never both; used instead of exceptions.
template <typename T>
class [[nodiscard]] Result {
  static_assert(!std::is_reference_v<T>, "Result holds values");

 public:
  /* implicit */ Result(T value) : error_(Error::Ok), value_(std::move(value)) {}
  /// `error` must not be Ok: an Ok Result without a value would have no meaning.
  /* implicit */ Result(Error error) : error_(error == Error::Ok ? Error::Internal : error), value_() {}

  [[nodiscard]] bool ok() const noexcept { return error_ == Error::Ok; }
  [[nodiscard]] Error error() const noexcept { return error_; }
  [[nodiscard]] T& value() & noexcept {
    assert(ok());
    return value_;
  }
  [[nodiscard]] const T& value() const& noexcept {
    assert(ok());
    return value_;
  }
  [[nodiscard]] T&& value() && noexcept {
    assert(ok());
    return std::move(value_);
  }

 private:
  Error error_;
  T value_;
};

}  // namespace slimcuda
