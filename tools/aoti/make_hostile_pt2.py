# SPDX-License-Identifier: Apache-2.0
"""Writes testdata/pt2/hostile/: small .pt2 archives that would make a careless loader spend
far more memory or time than they weigh (testdata/hostile_pt2.json says what loading each must
give; docs/hostile-archives.md is the table).

  make_hostile_pt2.py TESTDATA_PT2_DIR

Each is derived from a committed fixture of testdata/pt2 (valid.pt2, the synthetic model;
weights_blob_linear.pt2 and weights_pickle_linear.pt2, real exports), so no PyTorch and no
build is needed: zip bombs in each entry kind a load reads (deflate streams of 128 MiB of one
byte, about 130 KB each), a torch.save file whose storage is a bomb, entries nested inside
one another, and central directories that lie about sizes.
"""
import io
import pathlib
import struct
import sys
import zipfile
import zlib

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from make_pt2_fixtures import headers, set_sizes  # noqa: E402

BOMB = 128 << 20  # inflated bytes of each bomb: past every cap and the tests' 64 MB, ~130 KB deflated


def read(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i)) for i in z.infolist()]


def write(items):
    """items: (name, data, deflate) with data bytes, or (prefix, fill byte, count) for a bomb."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, data, deflate in items:
            info = zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED if deflate else zipfile.ZIP_STORED
            if isinstance(data, tuple):
                prefix, fill, count = data
                with z.open(info, "w") as f:
                    f.write(prefix)
                    chunk = fill * (1 << 20)
                    left = count
                    while left > 0:
                        f.write(chunk[:min(left, len(chunk))])
                        left -= len(chunk)
            else:
                z.writestr(info, data)
    return bytearray(buf.getvalue())


def replace(items, suffix, data, deflate=True):
    """The entries with the one ending in `suffix` given new data."""
    out, hit = [], 0
    for name, d in items:
        if name.endswith(suffix):
            out.append((name, data, deflate))
            hit += 1
        else:
            out.append((name, d, False))
    assert hit == 1, suffix
    return out


def kept(items):
    return [(n, d, False) for n, d in items]


def set_crc(data, name, crc):
    local, central = headers(data, name)
    struct.pack_into("<I", data, local + 14, crc)
    struct.pack_into("<I", data, central + 16, crc)
    return data


def nested(items, inner_suffix):
    """The archive with entry `inner_suffix` moved inside a new STORED entry's bytes: its local
    header and data lie within 'm/padding', its central record points there."""
    inner_name, inner_data = next((n, d) for n, d in items if n.endswith(inner_suffix))
    lone = write([(inner_name, inner_data, False)])
    _, inner_central = headers(lone, inner_name)
    eocd = lone.rfind(b"PK\x05\x06")
    record = bytearray(lone[inner_central:eocd])
    body = bytes(lone[:inner_central])  # its local header and data
    rest = [(n, d, False) for n, d in items if n != inner_name] + [("m/padding", body, False)]
    out = write(rest)
    local, _ = headers(out, "m/padding")
    data_at = local + 30 + len(b"m/padding")
    struct.pack_into("<I", record, 42, data_at)
    end = out.rfind(b"PK\x05\x06")
    (count,) = struct.unpack_from("<H", out, end + 10)
    cd_size, cd_offset = struct.unpack_from("<II", out, end + 12)
    tail = bytearray(out[end:])
    struct.pack_into("<HHII", tail, 8, count + 1, count + 1, cd_size + len(record), cd_offset)
    return bytearray(out[:end]) + record + tail


def main(argv):
    src = pathlib.Path(argv[0])
    out = src / "hostile"
    out.mkdir(parents=True, exist_ok=True)
    valid = read(src / "valid.pt2")
    blob = read(src / "weights_blob_linear.pt2")
    pickle = read(src / "weights_pickle_linear.pt2")
    lib = next(d for n, d in valid if n.endswith(".so"))
    meta = next(d for n, d in valid if n.endswith("_metadata.json"))
    source = next(d for n, d in valid if n.endswith(".cpp"))
    files = {}
    # The library: an ELF header and 128 MiB of zeros (the 3 GiB case, smaller).
    files["library_bomb"] = write(replace(valid, ".so", (lib, b"\0", BOMB)))
    # Under the compressed-library cap, no ELF, and a wrong CRC: an error about the CRC
    # would mean the whole entry was inflated before its first bytes were looked at.
    so = next(n for n, _ in valid if n.endswith(".so"))
    files["library_zeros_under_cap"] = set_crc(write(replace(valid, ".so", (b"", b"\0", 31 << 20))), so, 0x12345678)
    files["wrapper_source_bomb"] = write(replace(valid, ".cpp", (source, b" ", BOMB)))
    files["metadata_bomb"] = write(replace(valid, "_metadata.json", (meta, b" ", BOMB)))
    # Refused from the directory, before the library is read: the test library stands in
    # for the export's (380 KB) to keep these small.
    small_blob = [(n, lib if n.endswith(".so") else d) for n, d in blob]
    files["weights_blob_bomb"] = write(replace(small_blob, ".blob", (b"", b"\0", BOMB)))
    config = next(d for n, d in pickle if n.endswith("weights_config.json"))
    small_pickle = [(n, lib if n.endswith(".so") else d) for n, d in pickle]
    files["weights_config_bomb"] = write(replace(small_pickle, "weights_config.json", (config, b" ", BOMB)))
    # A torch.save file (a zip inside the .pt2) whose storage is a bomb.
    weight_name, weight = next((n, d) for n, d in pickle if "/data/weights/" in n)
    inner = read(io.BytesIO(weight))
    storage = next(n for n, _ in inner if n.endswith("/data/0"))
    inner_bomb = write(replace(inner, storage, (b"", b"\0", BOMB)))
    files["nested_storage_bomb"] = write(replace(pickle, weight_name, bytes(inner_bomb), deflate=False))
    # The metadata entry nested inside another entry's bytes (the overlapping-zip shape).
    files["overlapping_entries"] = nested(valid, "_metadata.json")
    # The central directory (and local header) understating a compressed wrapper source:
    # it declares the source's own size, its stream inflates 16 MiB past it.
    cpp = next(n for n, _ in valid if n.endswith(".cpp"))
    lying = write(replace(valid, ".cpp", (source, b" ", 16 << 20)))
    files["sizes_understated"] = set_sizes(lying, cpp, uncompressed=len(source))
    # ... and overstating a compressed library: 2 MiB declared (within deflate's ratio and
    # the cap), its stream holds the real 12 KB.
    over = write(replace(valid, ".so", lib))
    files["sizes_overstated"] = set_sizes(over, so, uncompressed=2 << 20)
    # Under the caps: what a load may spend at most on each kind (docs/hostile-archives.md).
    # A compressed library of 32 MiB less 4 KiB (a real library, zero-padded: it loads).
    files["library_padded_under_cap"] = write(replace(valid, ".so", (lib, b"\0", (32 << 20) - 4096 - len(lib))))
    # A compressed wrapper source of 4 MiB less 4 KiB (spaces after the real one: it loads).
    files["wrapper_source_under_cap"] = write(replace(valid, ".cpp", (source, b" ", (4 << 20) - 4096 - len(source))))
    # JSON of the cap (256 KiB) less 4 KiB that parses into the largest tree: empty arrays or
    # objects.
    tree = (256 << 10) - 4096
    files["metadata_json_tree"] = write(replace(valid, "_metadata.json", b"[" + b"{}," * (tree // 3) + b"{}]"))
    files["weights_config_json_tree"] = write(
        replace(pickle, "weights_config.json", b'{"a": [' + b"[]," * (tree // 3) + b"[]]}"))
    # One declaration of the wrapper's last possible constant: a table of 131072 of them.
    blob_source = next(d for n, d in blob if n.endswith(".wrapper.cpp"))
    files["wrapper_constant_index"] = write(
        replace(blob, ".wrapper.cpp", blob_source + b'\n    constants_info_[131071].name = "w";\n', deflate=False))
    for name, data in files.items():
        (out / (name + ".pt2")).write_bytes(bytes(data))
        print(f"{name}.pt2: {len(data)} bytes")


if __name__ == "__main__":
    main(sys.argv[1:])
