# SPDX-License-Identifier: Apache-2.0
"""debian_rules_cc: rules_cc derived at fetch time from Debian's bazel-rules-cc.

Debian ships rules_cc 0.0.4, which calls use_cpp_toolchain(), absent from Bazel 4.2.3's
@bazel_tools. We copy /usr/share/bazel/rules/cc and replace those calls with the
toolchain type they stand for. The copy lives only in the output base, never in git.

rules_cc 0.0.4 also predates cc/common/, where newer rules_cc exports CcInfo and cc_common
(Bazel 9 no longer predeclares them). The copy gains that package, re-exporting Bazel 4's
built-ins, so our .bzl files load them from @rules_cc the same way under both Bazels.
"""

# cc/common/ as newer rules_cc has it, over Bazel 4's built-ins. The built-ins are read in a
# file of their own: a module that defines CcInfo cannot also refer to the predeclared one.
_CC_COMMON = {
    "cc/common/BUILD": 'exports_files(glob(["*.bzl"]))\n',
    "cc/common/native.bzl": "native_cc_info = CcInfo\nnative_cc_common = cc_common\n",
    "cc/common/cc_info.bzl": 'load(":native.bzl", "native_cc_info")\n\nCcInfo = native_cc_info\n',
    "cc/common/cc_common.bzl": 'load(":native.bzl", "native_cc_common")\n\ncc_common = native_cc_common\n',
}

_EDITED = [
    "cc/private/rules_impl/compiler_flag.bzl",
    "cc/private/rules_impl/cc_flags_supplier.bzl",
]

def _impl(ctx):
    src = ctx.attr.path
    if not ctx.path(src + "/cc/defs.bzl").exists:
        fail("%s has no rules_cc; run tools/setup.sh (Debian package bazel-rules-cc)" % src)
    res = ctx.execute(["cp", "-R", src + "/.", "."])
    if res.return_code != 0:
        fail("copy %s: %s" % (src, res.stderr))
    ctx.execute(["chmod", "-R", "u+w", "."])
    for f in _EDITED:
        text = ctx.read(f)
        text = text.replace(
            'load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain", "use_cpp_toolchain")',
            'load("@bazel_tools//tools/cpp:toolchain_utils.bzl", "find_cpp_toolchain")',
        )
        text = text.replace("use_cpp_toolchain()", '["@bazel_tools//tools/cpp:toolchain_type"]')
        if "use_cpp_toolchain" in text:
            fail("debian_rules_cc: %s still calls use_cpp_toolchain; the Debian package changed" % f)
        ctx.file(f, text)
    for f, content in _CC_COMMON.items():
        if ctx.path(f).exists:
            fail("debian_rules_cc: %s exists; the Debian package changed, use its own" % f)
        ctx.file(f, content)
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

debian_rules_cc = repository_rule(
    implementation = _impl,
    attrs = {"path": attr.string(default = "/usr/share/bazel/rules/cc")},
)

def _stub_impl(ctx):
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    for name, content in ctx.attr.files.items():
        ctx.file(name, content, executable = name.endswith(".sh"))

stub_repository = repository_rule(
    implementation = _stub_impl,
    attrs = {"files": attr.string_dict(doc = "file name -> content")},
    doc = "A repository made of a few generated files: stands in for ones Bazel 4 would download.",
)
