# SPDX-License-Identifier: Apache-2.0
"""Writes slimcuda/shim_prefix.h from the //csrc/shims:prefix build setting."""

load("@bazel_skylib//rules:common_settings.bzl", "BuildSettingInfo")

def _impl(ctx):
    prefix = ctx.attr.prefix[BuildSettingInfo].value
    if prefix and (not (prefix[0].isalpha() or prefix[0] == "_") or not prefix.replace("_", "a").isalnum()):
        fail("--//csrc/shims:prefix=%r is not a C identifier prefix" % prefix)
    out = ctx.outputs.out
    ctx.actions.write(out, "\n".join([
        "/* Generated from --//csrc/shims:prefix: the prefix of every exported aoti_torch_* shim. */",
        "#ifndef SLIMCUDA_SHIM_PREFIX_H_",
        "#define SLIMCUDA_SHIM_PREFIX_H_",
        "#define SLIMCUDA_SHIM_PREFIX %s" % prefix,
        "#define SLIMCUDA_SHIM_PREFIX_STRING \"%s\"" % prefix,
        "#endif",
        "",
    ]))
    return [DefaultInfo(files = depset([out]))]

shim_prefix_header = rule(
    implementation = _impl,
    attrs = {
        "out": attr.output(mandatory = True),
        "prefix": attr.label(mandatory = True),
    },
)
