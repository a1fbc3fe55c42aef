"""Compiler flags shared by slimcuda's own C++ targets (not applied to external code)."""

SLIMCUDA_COPTS = [
    "-Wall",
    "-Wextra",
    "-Werror",
    "-Wno-unused-parameter",
]
