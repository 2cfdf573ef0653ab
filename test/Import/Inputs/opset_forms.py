#!/usr/bin/python3
# Writes small ONNX models whose ops change form between opsets, for the
# importer's op-table tests (opset-forms.mlir, errors.mlir).
#
#   opset_forms.py NAME OUTPUT.onnx
#
# Each model holds one node named "n" at the opset in its name. The `bad_`
# models use a form the opset does not define.
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def vi(name, shape, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def model(op, inputs, attrs, opset, in_shapes, inits=(), outputs=("y",)):
    node = helper.make_node(op, list(inputs), list(outputs), name="n", **attrs)
    graph_inputs = [vi(name, shape) for name, shape in in_shapes]
    graph = helper.make_graph([node], "g", graph_inputs,
                              [vi(o, None) for o in outputs], list(inits))
    m = helper.make_model(graph, producer_name="weft-test",
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


X = [("x", [2, 3, 4])]

MODELS = {
    # Reduce* axes: an attribute before opset 13 (ReduceSum) or 18 (others),
    # input #1 after.
    "reduce_sum_11": lambda: model("ReduceSum", ["x"], {"axes": [1], "keepdims": 0}, 11, X),
    "reduce_sum_13": lambda: model("ReduceSum", ["x", "axes"], {"keepdims": 0}, 13, X,
                                   [ints("axes", [2])]),
    "reduce_mean_18": lambda: model("ReduceMean", ["x", "axes"], {"keepdims": 0}, 18, X,
                                    [ints("axes", [0])]),
    # Softmax before opset 13 normalizes every dimension from `axis` on.
    "softmax_11": lambda: model("Softmax", ["x"], {"axis": 1}, 11, X),
    "softmax_13": lambda: model("Softmax", ["x"], {"axis": 1}, 13, X),
    # Clip's bounds: attributes before opset 11.
    "clip_6": lambda: model("Clip", ["x"], {"min": -0.5, "max": 0.25}, 6, X),
    # Split sizes: an attribute from opset 2 to 12, input #1 from 13.
    "split_11": lambda: model("Split", ["x"], {"axis": 1, "split": [1, 2]}, 11, X,
                              outputs=("y0", "y1")),
    "split_13": lambda: model("Split", ["x", "split"], {"axis": 1}, 13, X,
                              [ints("split", [1, 2])], outputs=("y0", "y1")),
    # Pad-2 takes `pads` and `value` as attributes.
    "pad_2": lambda: model("Pad", ["x"], {"pads": [0, 1, 0, 0, 2, 0], "value": 1.5}, 2, X),
    # Concat before opset 4 defaults to axis 1.
    "concat_3": lambda: model("Concat", ["x", "x"], {}, 3, X),
    # Binary ops before opset 7: B lines up with A at `axis` when broadcast=1.
    "add_6_broadcast": lambda: model("Add", ["x", "b"], {"broadcast": 1, "axis": 1}, 6,
                                     X + [("b", [3])]),
    # Dropout-12 takes the ratio as input #1.
    "dropout_12": lambda: model("Dropout", ["x", "ratio"], {"seed": 3}, 12, X,
                                [numpy_helper.from_array(np.float32(0.25), "ratio")]),
    # A variadic op whose first input is omitted (it used to crash).
    "sum_first_omitted": lambda: model("Sum", ["", "x", "x"], {}, 13, X),
    # Forms the opset does not define.
    "bad_hardswish_13": lambda: model("HardSwish", ["x"], {}, 13, X),
    "bad_reduce_sum_13_attribute": lambda: model("ReduceSum", ["x"], {"axes": [1]}, 13, X),
    "bad_reduce_sum_11_input": lambda: model("ReduceSum", ["x", "axes"], {}, 11, X,
                                             [ints("axes", [1])]),
}

if __name__ == "__main__":
    name, out = sys.argv[1], sys.argv[2]
    onnx.save_model(MODELS[name](), out)
