#!/usr/bin/env python3
"""Tests of scripts/llm_requant.py on a small GGUF written here.

    $DMAR_CACHE/llm/venv/bin/python scripts/llm_requant_test.py

Needs PyPI gguf and numpy (scripts/services/llm.sh installs them into its venv for the
derived models).
"""
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np
from gguf import GGMLQuantizationType as T
from gguf import GGUFReader, GGUFWriter, LlamaFileType
from gguf.quants import dequantize, quantize

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "llm_requant.py")


def write_source(path: str, weights: dict) -> None:
    w = GGUFWriter(path, "qwen2")
    w.add_name("tiny")
    w.add_file_type(LlamaFileType.MOSTLY_Q8_0)
    w.add_token_list(["a", "b", "c"])
    for name, (data, qtype) in weights.items():
        if qtype == T.F32:
            w.add_tensor(name, data)
        else:
            w.add_tensor(name, quantize(data, qtype), raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True)


class RequantTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.dir.name, "src.gguf")
        rng = np.random.default_rng(1)
        self.weights = {
            "token_embd.weight": (rng.standard_normal((8, 64), dtype=np.float32), T.Q8_0),
            "blk.0.attn_norm.weight": (rng.standard_normal(64, dtype=np.float32), T.F32),
            "blk.0.ffn_up.weight": (rng.standard_normal((16, 64), dtype=np.float32), T.Q8_0),
            "output.weight": (rng.standard_normal((8, 64), dtype=np.float32), T.Q8_0),
        }
        write_source(self.src, self.weights)

    def tearDown(self):
        self.dir.cleanup()

    def convert(self, target: str) -> GGUFReader:
        dst = os.path.join(self.dir.name, target + ".gguf")
        r = run("--to", target, self.src, dst)
        self.assertEqual(r.returncode, 0, r.stderr)
        return GGUFReader(dst)

    def test_block_weights_change_format_and_keep_their_values(self):
        out = {t.name: t for t in self.convert("q4_0").tensors}
        up = out["blk.0.ffn_up.weight"]
        self.assertEqual(up.tensor_type, T.Q4_0)
        got = dequantize(up.data, T.Q4_0)
        want = self.weights["blk.0.ffn_up.weight"][0]
        self.assertEqual(got.shape, want.shape)
        # Q4_0 keeps 4 bits a weight: the error is bounded by the block's scale.
        self.assertLess(np.abs(got - want).max(), np.abs(want).max() / 7)
        self.assertGreater(np.abs(got - want).max(), 0)

    def test_everything_else_is_copied_byte_for_byte(self):
        src = {t.name: t for t in GGUFReader(self.src).tensors}
        out = {t.name: t for t in self.convert("q4_0").tensors}
        self.assertEqual([t.name for t in GGUFReader(self.src).tensors], list(out))
        for name in ("token_embd.weight", "output.weight", "blk.0.attn_norm.weight"):
            self.assertEqual(out[name].tensor_type, src[name].tensor_type, name)
            self.assertEqual(bytes(out[name].data), bytes(src[name].data), name)

    def test_metadata_is_copied_with_the_new_file_type(self):
        r = self.convert("q4_0")
        self.assertEqual(r.fields["general.name"].contents(), "tiny")
        self.assertEqual(r.fields["general.architecture"].contents(), "qwen2")
        self.assertEqual(r.fields["tokenizer.ggml.tokens"].contents(), ["a", "b", "c"])
        self.assertEqual(r.fields["general.file_type"].contents(), LlamaFileType.MOSTLY_Q4_0)
        self.assertEqual(r.fields["dmar.requantized_from"].contents(), "MOSTLY_Q8_0")

    def test_output_is_deterministic(self):
        a = os.path.join(self.dir.name, "a.gguf")
        b = os.path.join(self.dir.name, "b.gguf")
        for dst in (a, b):
            self.assertEqual(run("--to", "q8_0", self.src, dst).returncode, 0)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            self.assertEqual(fa.read(), fb.read())

    def test_bad_input_is_refused_with_a_reason(self):
        r = run("--to", "q4_0", os.path.join(self.dir.name, "missing.gguf"), os.path.join(self.dir.name, "x.gguf"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not a file", r.stderr)
        r = run("--to", "q4_0", self.src, self.src)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("exists", r.stderr)
        r = run("--to", "q3_k", self.src, os.path.join(self.dir.name, "x.gguf"))
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("invalid choice", r.stderr)


if __name__ == "__main__":
    unittest.main()
