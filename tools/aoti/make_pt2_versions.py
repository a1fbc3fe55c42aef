# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/pt2_versions/: small CPU .pt2 exports from one PyTorch version each, and
their cases in testdata/pt2_versions.json (what loading, describing and running each must give).

  make_pt2_versions.py --export TESTDATA   exports with the PyTorch that runs this script into
                                           TESTDATA/pt2_versions/<torch version>/ and replaces
                                           that version's cases in TESTDATA/pt2_versions.json
  make_pt2_versions.py --newer TESTDATA    (no PyTorch needed) the refusal cases: the newest
                                           version's dynamic_batch export with a newer archive_version,
                                           a newer .data/version, and a container ABI whose Run
                                           takes another parameter list

tools/aoti/torch_versions.sh makes a virtual environment per version and runs --export in it.
The models (a few KB of weights each; the libraries are most of each file):
  mlp_in_so      Linear(8, 16), ReLU, Linear(16, 4); x float32 [2, 8]; weights inside the .so
  dynamic_batch  the same MLP with x float32 [batch, 8], 2 <= batch <= 32; weights inside the .so
  weights_blob   relu(Linear(8, 4)(x) + z); x [2, 8], z [2, 4]; weights in the archive's
                 binary_blob (package_constants_in_so=False)
Each case's reference is eager PyTorch's output for the inputs it states.
"""
import fcntl
import json
import os
import pathlib
import subprocess
import sys
import tempfile
import zipfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import make_pt2_fixtures  # noqa: E402  (its export helper scrubs the exporting machine's paths)

JSON = "pt2_versions.json"
DESCRIPTION = (
    "CPU .pt2 exports from each supported PyTorch version (testdata/pt2_versions/<version>/, written by "
    "tools/aoti/torch_versions.sh through tools/aoti/make_pt2_versions.py) and what slimcuda must give for each. "
    "op 'run': the load succeeds; inputs: each input's spec as slimcuda describes it (dtype, sizes -- a dynamic "
    "dimension's upper bound --, min_sizes for a dynamic input, dynamism, device); runs: input tensors (sizes, "
    "row-major float32 data) and the outputs eager PyTorch gave for them, compared within tolerance. archive: "
    "the version records the archive holds (archive_version, .data/version), as measured. op 'load': a load "
    "that must fail with expect and message. Paths are relative to this file. Read by "
    "csrc/c_api/pt2_versions_test.cc and go/slimcuda/pt2_versions_test.go.")


def _mlp():
    import torch

    class Mlp(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(8, 16)
            self.fc2 = torch.nn.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.fc1(x).relu())

    torch.manual_seed(0)
    return Mlp().eval()


def _blob_model():
    import torch

    class AddRelu(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(8, 4)

        def forward(self, x, z):
            return (self.linear(x) + z).relu()

    torch.manual_seed(1)
    return AddRelu().eval()


def _tensor(t):
    return {"sizes": list(t.shape), "data": [float(v) for v in t.detach().flatten().tolist()]}


def _spec(sizes, dynamic_min=None):
    s = {"dtype": "float32", "sizes": sizes, "dynamism": "dynamic_bounded" if dynamic_min else "static",
         "device": "cpu"}
    if dynamic_min:
        s["min_sizes"] = dynamic_min
    return s


def _archive_facts(path):
    with zipfile.ZipFile(path) as z:
        def read(suffix):
            names = [n for n in z.namelist() if n.endswith(suffix)]
            return z.read(names[0]).decode().strip() if names else None
        return {"archive_version": read("/archive_version"), "data_version": read("/.data/version")}


def _check_no_avx512(path):
    """Fails if a library in archive `path` holds AVX-512 (zmm) instructions: AOTInductor
    compiles CPU libraries with -march=native, and a fixture made on an AVX-512 machine dies
    with SIGILL on every machine without it (the AVX2-only CI and development machines)."""
    with zipfile.ZipFile(path) as z, tempfile.TemporaryDirectory() as tmp:
        for name in (n for n in z.namelist() if n.endswith(".so")):
            lib = pathlib.Path(tmp) / "lib.so"
            lib.write_bytes(z.read(name))
            asm = subprocess.run(["objdump", "-d", str(lib)], check=True, capture_output=True, text=True).stdout
            if "zmm" in asm:
                sys.exit(f"make_pt2_versions: {path}: {name} holds AVX-512 (zmm) instructions; "
                         "export on a machine without AVX-512 (or with ATEN_CPU_CAPABILITY=avx2)")


def export(testdata):
    # Inductor's CPU vector ISA: AVX2 at most, whatever the exporting machine has (read at
    # import; -march=native still applies, hence the check after each export).
    os.environ.setdefault("ATEN_CPU_CAPABILITY", "avx2")
    import torch

    version = torch.__version__.split("+")[0]
    out = testdata / "pt2_versions" / version
    out.mkdir(parents=True, exist_ok=True)
    in_so = {"aot_inductor.package_constants_in_so": True}
    cases = []

    def case(model_name, model, args, configs, specs, runs, dynamic_shapes=None):
        path = out / (model_name + ".pt2")
        # Newer versions compile with line tables by default (-g1: 1.2 MB of debug sections
        # in a 0.4 MB library); mlp_in_so keeps every default, the others leave them out.
        if model_name != "mlp_in_so" and hasattr(torch._inductor.config.aot_inductor, "enable_line_tables"):
            configs = dict(configs, **{"aot_inductor.enable_line_tables": False})
        ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes)
        make_pt2_fixtures._export_program(ep, path, configs)
        _check_no_avx512(path)
        with torch.no_grad():
            refs = [{"inputs": [_tensor(a) for a in run], "outputs": [_tensor(model(*run))]} for run in runs]
        cases.append({"name": f"torch_{version}_{model_name}", "op": "run", "requires": "none", "torch": version,
                      "file": f"pt2_versions/{version}/{model_name}.pt2", "archive": _archive_facts(path),
                      "inputs": specs, "runs": refs, "tolerance": 1e-5})

    mlp = _mlp()
    torch.manual_seed(2)
    x = torch.randn(2, 8)
    case("mlp_in_so", mlp, (x,), in_so, [_spec([2, 8])], [(x,)])
    # min 2: export specializes size-1 dimensions, so a Dim(min=1) compiles to a check of
    # >= 2 anyway (measured with 2.15).
    batch = torch.export.Dim("batch", min=2, max=32)
    case("dynamic_batch", mlp, (torch.randn(4, 8),), in_so, [_spec([32, 8], [2, 8])],
         [(torch.randn(3, 8),), (torch.randn(2, 8),), (torch.randn(32, 8),)], dynamic_shapes={"x": {0: batch}})
    blob = _blob_model()
    xz = (torch.randn(2, 8), torch.randn(2, 4))
    case("weights_blob", blob, xz, {"aot_inductor.package_constants_in_so": False,
                                    "aot_inductor.package_constants_on_disk_format": "binary_blob"},
         [_spec([2, 8]), _spec([2, 4])], [xz])
    _merge(testdata, lambda c: c.get("torch") != version, cases)
    print(f"make_pt2_versions: {len(cases)} exports from PyTorch {version} in {out}")


def _merge(testdata, keep, new_cases):
    """Replaces the cases `keep` rejects with new_cases, sorted by name."""
    path = testdata / JSON
    # Versions may be exported at once (one torch_versions.sh per version): one merge at a time.
    lock = os.open(testdata, os.O_RDONLY)  # a lock on the directory: no lock file left behind
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        cases = json.loads(path.read_text())["cases"] if path.exists() else []
        cases = sorted([c for c in cases if keep(c)] + new_cases, key=lambda c: c["name"])
        lines = ",\n".join("    " + json.dumps(c) for c in cases)
        path.write_text('{\n  "description": ' + json.dumps(DESCRIPTION) + ',\n  "cases": [\n' + lines + "\n  ]\n}\n")
    finally:
        os.close(lock)  # releases the lock


def _rewrite(src, dst, change):
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            b.writestr(info, change(info.filename, a.read(info)))


def newer(testdata):
    """The refusal cases, derived from the newest version's dynamic_batch export."""
    root = testdata / "pt2_versions"
    versions = sorted((p.name for p in root.iterdir() if (p / "dynamic_batch.pt2").exists()),
                      key=lambda v: tuple(int(p) for p in v.split(".")))
    newest = versions[-1]
    src = root / newest / "dynamic_batch.pt2"
    out = root / "newer"
    out.mkdir(exist_ok=True)
    rel = f"pt2_versions/newer/"
    cases = []

    def refuse(name, change, expect, message):
        _rewrite(src, out / (name + ".pt2"), change)
        _check_no_avx512(out / (name + ".pt2"))
        cases.append({"name": name, "op": "load", "requires": "none", "file": rel + name + ".pt2",
                      "from": newest, "expect": expect, "message": message})

    refuse("newer_archive_version", lambda n, d: b"1" if n.endswith("/archive_version") else d, "NotSupported",
           "archive_version 1; slimcuda reads archive_version 0")
    refuse("newer_data_version", lambda n, d: b"7\n" if n.endswith("/.data/version") else d, "NotSupported",
           ".data/version 7; slimcuda reads .data/version up to 6")

    def other_run(n, d):
        if not n.endswith(".wrapper.cpp"):
            return d
        head = b"AOTIRuntimeError AOTInductorModelContainerRun(\n"
        assert head in d, "no AOTInductorModelContainerRun definition in the wrapper source"
        return d.replace(head, head + b"    int64_t run_flags,\n", 1)

    refuse("newer_container_abi", other_run, "NotSupported",
           "its AOTInductorModelContainerRun takes (int64_t, AOTInductorModelContainerHandle, AtenTensorHandle*")
    _merge(testdata, lambda c: c.get("op") != "load", cases)
    print(f"make_pt2_versions: {len(cases)} refusal archives from PyTorch {newest}'s export in {out}")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("--export", "--newer"):
        sys.exit(__doc__)
    (export if sys.argv[1] == "--export" else newer)(pathlib.Path(sys.argv[2]))
