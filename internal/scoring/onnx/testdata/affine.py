"""Writes affine.onnx, the tiny model the onnx package's tests run:
Y = X @ W + b for X [batch, 3] float32, with fixed W [3, 2] and b [2].
Run: $DMAR_CACHE/venv/bin/python internal/scoring/onnx/testdata/affine.py
(the venv scripts/setup/20-encoder.sh creates has onnx and numpy)."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

W = np.array([[1.0, -2.0], [0.5, 0.25], [-1.5, 3.0]], dtype=np.float32)
b = np.array([0.125, -0.75], dtype=np.float32)
graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "b"], ["Y"])],
    "affine",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["batch", 3])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["batch", 2])],
    initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(b, "b")],
)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="dmar")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(os.path.dirname(os.path.abspath(__file__)), "affine.onnx"))
