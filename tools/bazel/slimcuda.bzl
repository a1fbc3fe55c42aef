# SPDX-License-Identifier: Apache-2.0
"""Macros for slimcuda's csrc/ components.

A component is one Bazel package. Its public headers are included as <slimcuda/NAME.h>
(the installed layout); its implementation is linked only into libslimcuda.so, the one
shared library every user resolves against (one caller-stream thread-local per process).
Tests link libslimcuda.so and see the headers, never a second static copy.
"""

load("@rules_cc//cc:defs.bzl", "cc_library", "cc_test")
load("//tools/bazel:copts.bzl", "SLIMCUDA_COPTS")

def slimcuda_headers(name, hdrs, deps = []):
    """Public headers of a component, included as <slimcuda/BASENAME>."""
    cc_library(
        name = name,
        hdrs = hdrs,
        include_prefix = "slimcuda",
        strip_include_prefix = "/" + native.package_name(),
        deps = deps,
        visibility = ["//visibility:public"],
    )

def slimcuda_impl(name, srcs, deps = [], copts = [], **kwargs):
    """A component's implementation, linked into //csrc:libslimcuda.so.

    Programs that are alone in their process may link some statically instead (the
    thread-local caller stream must never have two copies in one process): unit tests of
    internals that libslimcuda.so does not export (they link no libslimcuda.so, or only call
    its C ABI), the build-time packer //csrc/package:pack, and benchmarks of internals.
    """
    cc_library(
        name = name,
        srcs = srcs,
        # Internals stay out of libslimcuda.so's exports; SLIMCUDA_API (export.h) marks the
        # C ABI, the shims and the caller-stream C++ API.
        copts = SLIMCUDA_COPTS + ["-fvisibility=hidden"] + copts,
        deps = deps,
        alwayslink = True,
        visibility = ["//:__subpackages__"],
        **kwargs
    )

def slimcuda_cc_test(name, srcs, deps = [], fixtures = True, data = [], env = {}, internals = False, **kwargs):
    """A googletest test against libslimcuda.so, with the shared fixtures at hand.

    $SLIMCUDA_FIXTURES lists the runfiles paths of testdata/ (see csrc/testing/fixtures.h).
    internals = True: the test calls C++ internals, which libslimcuda.so does not export, so
    it links the whole library statically instead (//csrc:slimcuda_static, alone in its
    process: one caller-stream thread-local) and exports its symbols to the model
    libraries it loads (-rdynamic), as libslimcuda.so would.
    """
    library = ["//csrc:slimcuda_static"] if internals else ["//csrc:slimcuda"]
    cc_test(
        name = name,
        srcs = srcs,
        copts = SLIMCUDA_COPTS + kwargs.pop("copts", []),
        linkopts = kwargs.pop("linkopts", []) + (["-rdynamic"] if internals else []),
        deps = deps + library + [
            "//csrc/testing",
            "@com_google_googletest//:gtest_main",
        ],
        data = data + (["//testdata:fixtures"] if fixtures else []),
        # Static except libslimcuda.so itself: the binary then needs only libslimcuda.so and
        # libcudart beside it on the GPU machine (tools/gpu/bundle.sh).
        linkstatic = True,
        env = dict(env, **({"SLIMCUDA_FIXTURES": "$(rootpaths //testdata:fixtures)"} if fixtures else {})),
        **kwargs
    )
