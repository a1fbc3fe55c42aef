#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""cpu_zoo_fixtures.py WORK TESTDATA — copies the CPU zoo's small exports (export_models.py
WORK --device cpu --only the cpu_* fixture variants, see cpu_zoo.sh --fixtures) into
TESTDATA/cpu_zoo/VARIANT/ and writes TESTDATA/cpu_zoo.json, the cases both suites run
(csrc/c_api/cpu_zoo_test.cc, go/slimcuda/cpu_zoo_test.go).

Per variant only what the tests read: model.pt2, meta.json, shims.json and per case
inputs.json + input_<i>.bin, expected.json + expected_<i>.f32.bin (the eager outputs as
float32). Cases: "run" (every case of the variant matches eager within meta.json's
tolerance, twice in a row: a model with state must give the same outputs again) and
"run_error" (one input element set to a bad value: the run fails with the code and message).
"""
import json
import os
import shutil
import sys

# Bad input a CPU export checks at run time: a token id past the vocabulary (the embedding's
# generated bounds check, aoti_torch_check inside an OpenMP region). Just past it: the code
# after a check that cannot stop it still reads the row (see csrc/core/model_checks.h), and
# an id far past the table can fault there (GPT-2 with id 1000 did, in one process of two).
ERRORS = [
    {"name": "cpu_bert_token_past_vocabulary", "variant": "cpu_bert", "input": 0, "element": 3, "value": 128,
     "expect": "InvalidArgument", "message": "index out of bounds"},
    {"name": "cpu_gpt2_token_past_vocabulary", "variant": "cpu_gpt2", "input": 0, "element": 0, "value": 128,
     "expect": "InvalidArgument", "message": "index out of bounds"},
]


def copy_variant(work, out, name):
    src, dst = os.path.join(work, name), os.path.join(out, "cpu_zoo", name)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    for f in ("model.pt2", "meta.json", "shims.json"):
        shutil.copy(os.path.join(src, f), dst)
    meta = json.load(open(os.path.join(src, "meta.json")))
    for case in meta["cases"]:
        cs, cd = os.path.join(src, case["dir"]), os.path.join(dst, case["dir"])
        os.makedirs(cd)
        specs = json.load(open(os.path.join(cs, "inputs.json")))
        keep = ["inputs.json", "expected.json"] + [s["file"] for s in specs] + \
            [o["float32_file"] for o in json.load(open(os.path.join(cs, "expected.json")))]
        for f in keep:
            shutil.copy(os.path.join(cs, f), cd)
    return meta


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    work, out = sys.argv[1], sys.argv[2]
    names = sorted(n for n in os.listdir(work) if os.path.exists(os.path.join(work, n, "meta.json")))
    cases = []
    for name in names:
        meta = copy_variant(work, out, name)
        cases.append({"name": name, "op": "run", "requires": "none", "dir": "cpu_zoo/" + name,
                      "torch": meta["torch"]})
    for e in ERRORS:
        if e["variant"] in names:
            c = dict(e, op="run_error", requires="none", dir="cpu_zoo/" + e.pop("variant"))
            c.pop("variant", None)
            cases.append(c)
    doc = {
        "description": (
            "Real CPU exports (PyTorch's AOTInductor, libtorch-free: tools/aoti/cpu_zoo.sh --fixtures) that "
            "slimcuda loads and runs on the CPU: testdata/cpu_zoo/<variant>/ holds model.pt2, meta.json "
            "(export_models.py: inputs, outputs, tolerance, cases), shims.json (the shims its library calls) and "
            "per case inputs.json + input_<i>.bin (raw row-major bytes in the input's dtype) and expected.json + "
            "expected_<i>.f32.bin (eager PyTorch's outputs as float32). op run: load dir/model.pt2 on the CPU, "
            "run every case twice, each output within |got - want| <= atol + rtol |want| of meta.json's "
            "tolerance. op run_error: the first case with element `element` (row-major) of input `input` set to "
            "`value`: the run fails with expect and a message containing message. Read by "
            "csrc/c_api/cpu_zoo_test.cc (C++) and go/slimcuda/cpu_zoo_test.go (Go)."),
        "cases": cases,
    }
    text = json.dumps(doc)
    text = text.replace('"cases": [{', '"cases": [\n  {').replace('}, {"name"', '},\n  {"name"')
    with open(os.path.join(out, "cpu_zoo.json"), "w") as fo:
        fo.write(text[:-2] + "\n]}\n" if text.endswith("]}") else text + "\n")


if __name__ == "__main__":
    main()
