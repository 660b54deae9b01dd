#!/usr/bin/env python3
"""Rewrite a GGUF model's transformer weights in another llama.cpp weight format.

    python scripts/llm_requant.py SRC.gguf DST.gguf --to q8_0|q4_0

Every weight matrix of the transformer blocks (blk.*, two dimensions, quantized) is dequantized
and quantized again in the target format; everything else is copied byte for byte: the token
embedding (a row lookup, its format does not change the speed), the output projection (llama.cpp's
own Q4_0 recipe also keeps it in a K-quant), the 1-D norms and biases, and all metadata except
general.file_type. The key dmar.requantized_from records the source's format. Why: on a CPU the
prompt is read by matrix multiplications whose speed depends on the weight format (llama.cpp
repacks Q4_0 into interleaved blocks at load time; Q8_0 uses plain int8 dot products), and a
K-quant Q4_K_M file is what the model packages ship. Q4_K -> Q8_0 is nearly exact; Q4_K -> Q4_0
adds rounding error. The output is deterministic for a given input and gguf/numpy version, so a
setup step can pin its sha256. Needs PyPI gguf (gguf-py) and numpy.
"""
import argparse
import os
import sys

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFValueType, GGUFWriter, LlamaFileType
from gguf.quants import dequantize, quantize

TARGETS = {
    "q8_0": (GGMLQuantizationType.Q8_0, LlamaFileType.MOSTLY_Q8_0),
    "q4_0": (GGMLQuantizationType.Q4_0, LlamaFileType.MOSTLY_Q4_0),
}
FLOAT_TYPES = {GGMLQuantizationType.F32, GGMLQuantizationType.F16, GGMLQuantizationType.BF16}


def requantizes(tensor) -> bool:
    """Whether the tensor is a block weight matrix this script rewrites."""
    return (tensor.name.startswith("blk.") and len(tensor.shape) == 2
            and tensor.tensor_type not in FLOAT_TYPES)


def copy_metadata(reader: GGUFReader, writer: GGUFWriter, file_type: int, source_type: str) -> None:
    for key, field in reader.fields.items():
        # The writer adds the header fields and the architecture itself.
        if key.startswith("GGUF.") or key == "general.architecture":
            continue
        if key == "general.file_type":
            writer.add_file_type(file_type)
            continue
        vtype = field.types[0]
        sub = field.types[-1] if vtype == GGUFValueType.ARRAY else None
        writer.add_key_value(key, field.contents(), vtype, sub)
    writer.add_string("dmar.requantized_from", source_type)


def convert(src: str, dst: str, target: str) -> None:
    qtype, file_type = TARGETS[target]
    reader = GGUFReader(src)
    arch = reader.fields["general.architecture"].contents()
    ft = reader.fields.get("general.file_type")
    source_type = LlamaFileType(ft.contents()).name if ft else "unknown"
    writer = GGUFWriter(dst, arch)
    copy_metadata(reader, writer, file_type, source_type)
    total = len(reader.tensors)
    for i, t in enumerate(reader.tensors, 1):
        if requantizes(t):
            data = quantize(dequantize(t.data, t.tensor_type), qtype)
            writer.add_tensor(t.name, data, raw_dtype=qtype)
        elif t.tensor_type in FLOAT_TYPES:
            writer.add_tensor(t.name, np.array(t.data))
        else:
            writer.add_tensor(t.name, np.array(t.data), raw_dtype=t.tensor_type)
        if i % 25 == 0 or i == total:
            print(f"llm_requant: {i}/{total} tensors", file=sys.stderr, flush=True)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("src", help="the source GGUF")
    ap.add_argument("dst", help="the GGUF to write (must not exist)")
    ap.add_argument("--to", required=True, choices=sorted(TARGETS), help="the target weight format")
    args = ap.parse_args()
    if not os.path.isfile(args.src):
        ap.error(f"source {args.src!r} is not a file")
    if os.path.exists(args.dst):
        ap.error(f"destination {args.dst!r} exists; remove it first")
    try:
        convert(args.src, args.dst, args.to)
    except BaseException:
        if os.path.exists(args.dst):
            os.remove(args.dst)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())
