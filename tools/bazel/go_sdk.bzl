# SPDX-License-Identifier: Apache-2.0
"""go_host_sdk_with_std: the host Go SDK, copied, with a precompiled standard library.

rules_go v0.24 reads GOROOT/pkg/<os>_<arch>/*.a, which Go stopped shipping in 1.20. We copy
GOROOT into the output base and build std there once (about a minute on 2 cores); the
result is wrapped with rules_go's go_wrap_sdk(root_file = "@<name>//:ROOT").
"""

def _impl(ctx):
    go = ctx.which("go")
    if go == None:
        fail("go_host_sdk_with_std: no `go` on PATH; install Go 1.26 (see README)")
    res = ctx.execute([go, "env", "GOROOT"])
    if res.return_code != 0:
        fail("go env GOROOT: " + res.stderr)
    goroot = res.stdout.strip()
    ctx.report_progress("copying " + goroot)
    res = ctx.execute(["cp", "-a", goroot + "/.", "."], timeout = 900)
    if res.return_code != 0:
        fail("copy %s: %s" % (goroot, res.stderr))
    ctx.execute(["chmod", "-R", "u+w", "."])
    ctx.report_progress("go install std (once per output base)")
    res = ctx.execute(
        [str(ctx.path("bin/go")), "install", "std"],
        environment = {
            "GOROOT": str(ctx.path(".")),
            "GODEBUG": "installgoroot=all",
            "CGO_ENABLED": "1",
            "GOTOOLCHAIN": "local",
            "GOFLAGS": "",
        },
        timeout = 3600,
    )
    if res.return_code != 0:
        fail("go install std:\n" + res.stderr)
    ctx.file("ROOT", "")
    ctx.file("BUILD.bazel", "exports_files([\"ROOT\"])\n")
    ctx.file("WORKSPACE", "workspace(name = \"%s\")\n" % ctx.name)

go_host_sdk_with_std = repository_rule(
    implementation = _impl,
    environ = ["PATH", "GOROOT"],
)
