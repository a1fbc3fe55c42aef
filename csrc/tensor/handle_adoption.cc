// SPDX-License-Identifier: Apache-2.0
#include "csrc/tensor/handle_adoption.h"

#include <algorithm>
#include <new>
#include <utility>

namespace slimcuda {
namespace {

thread_local HandleAdoption* current = nullptr;

}  // namespace

HandleAdoption::HandleAdoption(std::vector<const SlimTensor*> lent) noexcept
    : lent_(std::move(lent)), previous_(current) {
  std::sort(lent_.begin(), lent_.end());
  current = this;
}

HandleAdoption::~HandleAdoption() { current = previous_; }

void HandleAdoption::note(const SlimTensor* source, SlimTensor* made) noexcept {
  HandleAdoption* a = current;
  if (a == nullptr || made == nullptr || !std::binary_search(a->lent_.begin(), a->lent_.end(), source)) return;
  try {
    a->adopted_.emplace_back(made);
    made->set_adopted();
  } catch (const std::bad_alloc&) {
    a->failed_ = true;
  }
}

std::vector<std::unique_ptr<SlimTensor>> HandleAdoption::take() noexcept { return std::move(adopted_); }

}  // namespace slimcuda
