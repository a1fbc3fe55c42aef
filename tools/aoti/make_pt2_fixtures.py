# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/pt2/: the .pt2 archives of testdata/pt2.json (which says what each must give).

  make_pt2_fixtures.py LIBRARY OUT_DIR            synthetic and malformed archives around a
                                                  test model library (models/testing:
                                                  libconstant_1.so, y = x + 1)
  make_pt2_fixtures.py --export OUT_DIR           also the real CPU exports (needs PyTorch 2.11):
                                                  weights in the .so, in a binary_blob, as
                                                  pickle_weights, nowhere (package_constants_in_so
                                                  =False alone), and the blob and pickle exports
                                                  with one defect each
  make_pt2_fixtures.py --proxy LIBRARY OUT_DIR    archives around a library that calls the proxy
                                                  executor (models/testing: libproxy_call.so), each
                                                  with one defect of its extern-kernel nodes
  make_pt2_fixtures.py --demo DEVICE LIBRARY OUT  the demo model's library (models/demo) as a .pt2
                                                  for DEVICE (cpu, cuda), input x: float32
                                                  [1..64, 16] (Bazel: //models/demo:demo_pt2)

The synthetic archives follow what PyTorch 2.11's aoti_compile_and_package writes (checked
against real exports): a top folder named after the package, STORED entries,
<root>/data/aotinductor/<model>/<hash>.wrapper.so beside <hash>.wrapper_metadata.json and
the generated <hash>.wrapper.cpp, whose check_input_<i> functions state each input's dtype,
sizes, strides and device. The malformed ones are the same archive with one defect each,
some patched byte-wise after writing (zipfile refuses to write them).

Regenerate (from the repository root):
  bazel build //models/testing:constant_library
  python3 tools/aoti/make_pt2_fixtures.py bazel-bin/models/testing/libconstant_1.so testdata/pt2
  PYTHON_WITH_TORCH tools/aoti/make_pt2_fixtures.py --export testdata/pt2
"""
import io
import json
import pathlib
import struct
import sys
import warnings
import zipfile

ROOT = "m/"
FOLDER = ROOT + "data/aotinductor/model/"
STEM = "cabc123.wrapper"
META = {"AOTI_DEVICE_KEY": "cpu", "AOTI_PLATFORM": "linux", "AOTI_MACHINE": "x86_64"}

# The input check AOTInductor generates for x: float32 [1], stride [1], on the CPU.
WRAPPER = """// a generated wrapper's input checks (the part slimcuda reads)
AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg0_1 = ConstantHandle(input_handles[0]);
    int32_t arg0_1_dtype;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_dtype(arg0_1, &arg0_1_dtype));

    int32_t arg0_1_expected_dtype = aoti_torch_dtype_float32();
    if (arg0_1_expected_dtype != arg0_1_dtype) {
        throw std::runtime_error("input_handles[0]: unmatched dtype");
    }
    auto arg0_1_size = arg0_1.sizes();

    if (1 != arg0_1_size[0]) {
        throw std::runtime_error("input_handles[0]: unmatched dim value at 0");
    }
    auto arg0_1_stride = arg0_1.strides();

    if (1 != arg0_1_stride[0]) {
        throw std::runtime_error("input_handles[0]: unmatched stride value at 0");
    }
    int32_t arg0_1_device_type;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_get_device_type(arg0_1, &arg0_1_device_type));

    int32_t arg0_1_expected_device_type = 0;
    if (arg0_1_expected_device_type != arg0_1_device_type) {
        throw std::runtime_error("input_handles[0]: unmatched device type");
    }
}
"""


# The demo's input x: float32 [s0, 16] with 1 <= s0 <= 64, rows of 16 (as AOTInductor writes
# a dynamic dimension's bounds); the constructor's counts and names and run_impl's output,
# y: [s0, 8], allocated with a symbolic size (what a dynamic output looks like).
DEMO_WRAPPER = """AOTI_NOINLINE static void check_input_0(
    AtenTensorHandle* input_handles
) {
    ConstantHandle arg0_1 = ConstantHandle(input_handles[0]);
    int32_t arg0_1_expected_dtype = aoti_torch_dtype_float32();
    auto arg0_1_size = arg0_1.sizes();

    if (arg0_1_size[0] < 1) {
        throw std::runtime_error("input_handles[0]: dim value is too small at 0");
    }

    if (arg0_1_size[0] > 64) {
        throw std::runtime_error("input_handles[0]: dim value is too large at 0");
    }

    if (16 != arg0_1_size[1]) {
        throw std::runtime_error("input_handles[0]: unmatched dim value at 1");
    }
    auto arg0_1_stride = arg0_1.strides();

    if (16 != arg0_1_stride[0]) {
        throw std::runtime_error("input_handles[0]: unmatched stride value at 0");
    }

    if (1 != arg0_1_stride[1]) {
        throw std::runtime_error("input_handles[0]: unmatched stride value at 1");
    }
    int32_t arg0_1_expected_device_type = %(device_type)d;
}

AOTInductorModel::AOTInductorModel(std::shared_ptr<ConstantMap> constants_map,
                                   std::shared_ptr<std::vector<ConstantHandle>> constants_array,
                                   const std::string& device_str,
                                   std::optional<std::string> cubin_dir)
    : AOTInductorModelBase(1,
                           1,
                           0,
                           device_str,
                           std::move(cubin_dir),
                           true) {
    inputs_info_[0].name = "arg0_1";
    outputs_info_[0].name = "output0";
}

void AOTInductorModel::run_impl(
    AtenTensorHandle*
        input_handles,
    AtenTensorHandle*
        output_handles,
    DeviceStreamType stream,
    AOTIProxyExecutorHandle proxy_executor
) {
    auto inputs = steal_from_raw_handles_to_raii_handles(input_handles, 1);
    auto arg0_1 = std::move(inputs[0]);
    auto arg0_1_size = arg0_1.sizes();
    int64_t s0 = arg0_1_size[0];
    const int64_t int_array_0[] = {s0, 8L};
    static constexpr int64_t int_array_1[] = {8L, 1L};
    AtenTensorHandle buf0_handle;
    AOTI_TORCH_ERROR_CODE_CHECK(aoti_torch_empty_strided(2, int_array_0, int_array_1, cached_torch_dtype_float32, cached_torch_device_type_%(device)s, this->device_idx_, &buf0_handle));
    RAIIAtenTensorHandle buf0(buf0_handle);
    output_handles[0] = buf0.release();
} // AOTInductorModel::run_impl
"""


def entries(lib, folder=FOLDER, meta=None, source=True, stem=STEM):
    out = [(ROOT + "archive_format", b"pt2"), (ROOT + "archive_version", b"0"), (ROOT + "byteorder", b"little")]
    out.append((folder + stem + ".so", lib))
    out.append((folder + stem + "_metadata.json", json.dumps(meta or META).encode()))
    if source:
        out.append((folder + stem + ".cpp", WRAPPER.encode()))
    return out


def write(items, deflate=()):
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are one of the defects
        with zipfile.ZipFile(buf, "w") as z:
            for name, data in items:
                info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
                info.compress_type = zipfile.ZIP_DEFLATED if name in deflate else zipfile.ZIP_STORED
                z.writestr(info, data)
    return bytearray(buf.getvalue())


def headers(data, name):
    """Offsets of the local and the central header of entry `name`."""
    n = name.encode()
    local = central = None
    at = 0
    while True:
        at = data.find(b"PK", at)
        if at < 0:
            break
        sig = bytes(data[at:at + 4])
        if sig == b"PK\x03\x04" and data[at + 30:at + 30 + len(n)] == n and local is None:
            local = at
        if sig == b"PK\x01\x02" and data[at + 46:at + 46 + len(n)] == n and central is None:
            central = at
        at += 2
    assert local is not None and central is not None, name
    return local, central


def set_sizes(data, name, compressed=None, uncompressed=None):
    local, central = headers(data, name)
    for base, off in ((local, 18), (central, 20)):
        if compressed is not None:
            struct.pack_into("<I", data, base + off, compressed)
        if uncompressed is not None:
            struct.pack_into("<I", data, base + off + 4, uncompressed)
    return data


# transformers' MoE grouped GEMM node as a Mixtral export writes it (2026-12-03), and the
# call of it the generated source makes (3 input tensors and the output).
def grouped_node(inputs=("input", "weight", "offs"), target="transformers::grouped_mm_fallback"):
    args = [{"name": n, "arg": {"as_tensor": {"name": "b%d" % i}}, "kind": 1} for i, n in enumerate(inputs)]
    node = {"target": target, "inputs": args, "outputs": [{"as_tensor": {"name": "buf9"}}], "metadata": {}}
    return json.dumps({"nodes": [{"name": "buf9", "node": node}]}).encode()


def proxy_call(tensors):
    return ("\n    aoti_torch_proxy_executor_call_function(proxy_executor, 0, 0, std::array<int64_t, 0>{}.data(), %d, "
            "std::array<AtenTensorHandle, %d>{%s}.data());\n" % (tensors, tensors,
                                                                   ", ".join("b%d" % i for i in range(tensors))))


def proxy_archives(lib, out):
    """The extern-kernel node defects a load must refuse before it runs anything."""
    nodes = FOLDER + STEM + ".json"
    base = entries(lib)
    with_call = [(n, d + proxy_call(4).encode() if n.endswith(".cpp") else d) for n, d in base]
    files = {
        "proxy_nodes_missing": base,
        "proxy_nodes_not_json": base + [(nodes, b"not json")],
        "proxy_nodes_too_large": base + [(nodes, b" " * (300 << 10))],
        "proxy_unknown_op": base + [(nodes, grouped_node(target="vendor::fused_thing"))],
        "proxy_node_missing_argument": base + [(nodes, grouped_node(inputs=("input", "weight")))],
        "proxy_calls_disagree": [(n, d + proxy_call(2).encode() if n.endswith(".cpp") else d) for n, d in base] +
                                [(nodes, grouped_node())],
        "proxy_nodes_bind": with_call + [(nodes, grouped_node())],
    }
    for name, items in files.items():
        # the oversized node file deflated (300 KiB of spaces): refused by its declared size
        (out / (name + ".pt2")).write_bytes(bytes(write(items, deflate={nodes} if "large" in name else ())))
    print(f"make_pt2_fixtures: {len(files)} proxy archives in {out}")


def main(argv):
    if argv and argv[0] == "--proxy":
        out = pathlib.Path(argv[2])
        out.mkdir(parents=True, exist_ok=True)
        proxy_archives(pathlib.Path(argv[1]).read_bytes(), out)
        return
    if argv and argv[0] == "--demo":
        device, lib, path = argv[1:4]
        items = entries(pathlib.Path(lib).read_bytes(), meta=dict(META, AOTI_DEVICE_KEY=device), source=False)
        items.append((FOLDER + STEM + ".cpp", (DEMO_WRAPPER % {"device_type": 1 if device == "cuda" else 0, "device": device}).encode()))
        pathlib.Path(path).write_bytes(bytes(write(items)))
        return
    export = "--export" in argv
    args = [a for a in argv if a != "--export"]
    out = pathlib.Path(args[-1])
    out.mkdir(parents=True, exist_ok=True)
    if export:
        export_real(out)
        return
    lib = pathlib.Path(args[0]).read_bytes()
    so = FOLDER + STEM + ".so"
    files = {}
    files["valid"] = write(entries(lib))
    files["valid_no_source"] = write(entries(lib, source=False))
    files["compressed_library"] = write(entries(lib), deflate={so})
    files["two_models"] = write(entries(lib, ROOT + "data/aotinductor/a/") +
                                entries(lib, ROOT + "data/aotinductor/b/")[3:])
    files["two_models_one_default"] = write(entries(lib) + entries(lib, ROOT + "data/aotinductor/other/")[3:])
    valid = files["valid"]
    files["truncated_half"] = valid[:len(valid) // 2]
    files["truncated_end_record"] = valid[:-10]
    files["zip_bomb"] = set_sizes(write(entries(lib), deflate={so}), so, uncompressed=0xFFFFFF00)
    files["stored_sizes_differ"] = set_sizes(bytearray(valid), so, uncompressed=len(lib) - 1)
    files["stored_size_past_end"] = set_sizes(bytearray(valid), so, compressed=0x7FFFFFFF, uncompressed=0x7FFFFFFF)
    short = write(entries(lib), deflate={so})
    files["library_inflates_short"] = set_sizes(short, so, uncompressed=len(lib) + 4096)
    files["traversal_dotdot"] = write(entries(lib) + [(ROOT + "../escape", b"x")])
    files["traversal_absolute"] = write(entries(lib) + [("/etc/escape", b"x")])
    files["duplicate_entry"] = write(entries(lib) + [(FOLDER + STEM + "_metadata.json", b"{}")])
    files["library_not_elf"] = write(entries(b"not a shared object\n" * 64))
    other = bytearray(lib)
    struct.pack_into("<H", other, 18, 183)  # e_machine: aarch64
    files["library_other_architecture"] = write(entries(bytes(other)))
    corrupt = bytearray(valid)
    local, _ = headers(corrupt, so)
    corrupt[local + 30 + len(so) + 200] ^= 0xFF  # a byte of the library's data
    files["library_crc_mismatch"] = corrupt
    files["no_model"] = write(entries(lib)[:3])
    files["two_libraries"] = write(entries(lib) + [(FOLDER + "cother.so", lib)])
    files["no_metadata"] = write([e for e in entries(lib) if not e[0].endswith("_metadata.json")])
    files["device_unknown"] = write(entries(lib, meta=dict(META, AOTI_DEVICE_KEY="mps")))
    files["cpu_isa_other"] = write(entries(lib, meta=dict(META, AOTI_CPU_ISA="VSX")))
    files["metadata_not_json"] = write([(n, b"not json" if n.endswith(".json") else d) for n, d in entries(lib)])
    bad_offset = bytearray(valid)
    _, central = headers(bad_offset, so)
    struct.pack_into("<I", bad_offset, central + 42, 0xFFFFFFF0)  # local header offset
    files["header_offset_out_of_range"] = bad_offset
    files["separate_kernel_binaries"] = write(entries(lib) + [(FOLDER + "triton_poi_fused_0.cubin", b"\x7fELF cubin")])
    files["only_end_record"] = bytearray(b"PK\x05\x06" + b"\0" * 8)
    for name, data in files.items():
        (out / (name + ".pt2")).write_bytes(bytes(data))
    print(f"make_pt2_fixtures: {len(files)} archives in {out}")


class _Linear:
    """y = relu(x @ W.T + b + z), x [2, 4], z [2, 3]: the real exports' model."""

    @staticmethod
    def make():
        import torch

        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.linear = torch.nn.Linear(4, 3)

            def forward(self, x, z):
                return (self.linear(x) + z).relu()

        torch.manual_seed(0)
        return Model().eval(), (torch.randn(2, 4), torch.randn(2, 3))


def _export(model, args, path, configs):
    """aoti_compile_and_package with `configs`, keeping every entry PyTorch wrote but the
    kernel source (unused here, and large); returns the entries' names."""
    import torch

    return _export_program(torch.export.export(model, args), path, configs)


def _export_program(program, path, configs):
    """_export of an exported program (tools/aoti/make_pt2_versions.py gives dynamic shapes)."""
    import torch

    tmp = path.with_suffix(".full.pt2")
    torch._inductor.aoti_compile_and_package(
        program, package_path=str(tmp),
        inductor_configs=dict({"aot_inductor.link_libtorch": False}, **configs))
    # The exporting machine's paths (PyTorch's headers, its compile cache) that the library's
    # strings and the wrapper's compile-command comments hold: blanked, keeping every size.
    import os
    from torch._inductor.runtime.cache_dir_utils import cache_dir

    machine = [os.path.dirname(os.path.dirname(torch.__file__)), cache_dir()]

    def scrub(name, data):
        if name.endswith(".wrapper.cpp"):
            data = b"\n".join(l for l in data.split(b"\n") if not l.startswith(b"// g++ "))
        for m in machine:
            data = data.replace(m.encode(), b"/" + b"_" * (len(m.encode()) - 1))
        return data

    with zipfile.ZipFile(tmp) as src, zipfile.ZipFile(path, "w") as dst:
        for info in src.infolist():
            if not info.filename.endswith(".kernel.cpp"):
                dst.writestr(info, scrub(info.filename, src.read(info)))
        names = src.namelist()
    tmp.unlink()
    return names


def _rewrite(src, dst, change):
    """Copies archive `src` to `dst` with entry data passed through change(name, data)
    (returning None drops the entry)."""
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w") as b:
        for info in a.infolist():
            data = change(info.filename, a.read(info))
            if data is not None:
                b.writestr(info, data)


def export_real(out):
    """The real CPU exports of _Linear and their eager reference."""
    import torch

    model, args = _Linear.make()
    with torch.no_grad():
        y = model(*args)
    _export(model, args, out / "real_cpu_linear.pt2", {"aot_inductor.package_constants_in_so": True})
    ref = {"x": args[0].flatten().tolist(), "z": args[1].flatten().tolist(), "y": y.flatten().tolist()}
    (out / "real_cpu_linear.ref.json").write_text(json.dumps(ref) + "\n")
    # Weights in the archive: one STORED <hash>.wrapper_weights.blob beside the library.
    blob = out / "weights_blob_linear.pt2"
    _export(model, args, blob, {"aot_inductor.package_constants_in_so": False,
                                "aot_inductor.package_constants_on_disk_format": "binary_blob"})
    # Weights in the archive as torch.save files (data/weights/*, weights_config.json).
    _export(model, args, out / "weights_pickle_linear.pt2", {
        "aot_inductor.package_constants_in_so": False,
        "aot_inductor.package_constants_on_disk_format": "pickle_weights"})
    _rewrite(out / "weights_pickle_linear.pt2", out / "weights_pickle_missing_file.pt2",
             lambda n, d: None if "/data/weights/" in n else d)
    # Weights nowhere: PyTorch's own loader crashes on the first run of such an export.
    _export(model, args, out / "no_weights_linear.pt2", {"aot_inductor.package_constants_in_so": False})
    # The blob export with one defect each (zipfile keeps the archive consistent: only the
    # blob's bytes are wrong).
    _rewrite(blob, out / "weights_blob_truncated.pt2", lambda n, d: d[:len(d) // 2] if n.endswith(".blob") else d)
    _rewrite(blob, out / "weights_blob_no_source.pt2", lambda n, d: None if n.endswith(".wrapper.cpp") else d)
    corrupt = bytearray(blob.read_bytes())
    with zipfile.ZipFile(blob) as z:
        name = next(n for n in z.namelist() if n.endswith(".blob"))
    local, _ = headers(corrupt, name)
    corrupt[local + 30 + len(name.encode()) + 5] ^= 0xFF  # a byte of the first weight (no extra field: zipfile)
    (out / "weights_blob_corrupted.pt2").write_bytes(bytes(corrupt))
    print(f"make_pt2_fixtures: real exports in {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
