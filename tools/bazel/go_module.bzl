# SPDX-License-Identifier: Apache-2.0
"""go_module: an offline stand-in for gazelle's go_repository (gazelle needs Bazel >= 5.4).

The host `go mod download` fetches the module through GOPROXY and the module cache and
checks the h1: sum we pin; the tree is copied (the cache is read-only), patched, and
given hand-written BUILD files from third_party/.
"""

def _run(ctx, args, what, **kwargs):
    res = ctx.execute(args, **kwargs)
    if res.return_code != 0:
        fail("%s failed (%d):\n%s%s" % (what, res.return_code, res.stdout, res.stderr))
    return res

def _go_module_impl(ctx):
    go = ctx.which("go")
    if go == None:
        fail("go_module(%s): no `go` on PATH; run tools/setup.sh" % ctx.name)
    ref = "%s@%s" % (ctx.attr.module, ctx.attr.version)
    res = _run(ctx, [go, "mod", "download", "-json", ref], "go mod download " + ref, timeout = 900)
    info = json.decode(res.stdout)
    if info.get("Error"):
        fail("go mod download %s: %s" % (ref, info["Error"]))
    if info.get("Sum") != ctx.attr.sum:
        fail("go_module(%s): %s has sum %s, want %s" % (ctx.name, ref, info.get("Sum"), ctx.attr.sum))
    _run(ctx, ["cp", "-R", info["Dir"] + "/.", "."], "copy " + ref)
    _run(ctx, ["chmod", "-R", "u+w", "."], "chmod")
    if not ctx.attr.keep_build_files:
        _run(ctx, ["find", ".", "-name", "BUILD", "-delete", "-o", "-name", "BUILD.bazel", "-delete"], "drop BUILD files")
    if not ctx.path("WORKSPACE").exists:
        ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)
    for patch in ctx.attr.patches:
        _run(ctx, ["patch", "-p1", "--forward", "-i", str(ctx.path(patch))], "patch " + str(patch))
    for label, pkg in ctx.attr.build_files.items():
        ctx.symlink(label, (pkg + "/" if pkg else "") + "BUILD.bazel")

go_module = repository_rule(
    implementation = _go_module_impl,
    attrs = {
        "module": attr.string(mandatory = True, doc = "Go module path"),
        "version": attr.string(mandatory = True),
        "sum": attr.string(mandatory = True, doc = "h1: hash, as in go.sum"),
        "patches": attr.label_list(allow_files = True, doc = "applied with patch -p1"),
        "keep_build_files": attr.bool(doc = "keep the module's own BUILD files (rules_go itself)"),
        "build_files": attr.label_keyed_string_dict(
            allow_files = True,
            doc = "BUILD file label -> package directory inside the module (\"\" = root)",
        ),
    },
    environ = ["GOPROXY", "GOMODCACHE", "GOFLAGS"],
)
