"""Compiler flags shared by slimcuda's own C++ targets (not applied to external code)."""

SLIMCUDA_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
    # Inline functions and template instances stay out of libslimcuda.so's exports (the
    # version script's slimcuda::* would match e.g. std::forward<slimcuda::T>'s return type).
    "-fvisibility-inlines-hidden",
]
