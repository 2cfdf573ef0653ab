#!/usr/bin/env python3
"""Compile a small MLP for the fabric, run it on the simulator, compare it
with the host reference, and show where the work happened.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/mlp.py [model.onnx]

Without an argument the model is built here with onnx.helper (64 -> 48 ->
ReLU -> 10 -> Softmax, a symbolic batch, fixed random weights); with one,
that model is loaded (e.g. examples/dense.onnx). Trains nothing, needs no
network. docs/python.md describes the API.
"""

import sys
import time

import numpy as np

import weft


def build_mlp():
    """A two-layer perceptron as an onnx.ModelProto."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((64, 48)) / 8).astype(np.float32)
    b1 = (rng.standard_normal(48) / 8).astype(np.float32)
    w2 = (rng.standard_normal((48, 10)) / 7).astype(np.float32)
    b2 = (rng.standard_normal(10) / 7).astype(np.float32)
    graph = helper.make_graph(
        [
            helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
            helper.make_node("Relu", ["h"], ["r"], name="act1"),
            helper.make_node("Gemm", ["r", "w2", "b2"], ["z"], name="fc2"),
            helper.make_node("Softmax", ["z"], ["y"], name="probs", axis=1),
        ],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [
            numpy_helper.from_array(w1, "w1"),
            numpy_helper.from_array(b1, "b1"),
            numpy_helper.from_array(w2, "w2"),
            numpy_helper.from_array(b2, "b2"),
        ],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def main(argv):
    if len(argv) > 1:
        model, samples = argv[1], None  # its batch as the model fixes it
    else:
        model, samples = build_mlp(), 8

    start = time.perf_counter()
    prog = weft.compile(model, grid="auto", max_grid="16x16", samples=samples)
    compiled = time.perf_counter()
    print(prog)
    f = prog.figures
    print("fabric %s, %d of %d colors, predicted %d cycles per sample"
          % (f["fabric"], f["colors_used"], f["routable_colors"],
             f["predicted_cycles_per_sample"]))
    for k in prog.kernels:
        print("  @%s: %s on %dx%d PEs at column %d, predicted %d cycles per sample"
              % (k["name"], k["what"], k["width"], k["rows"], k["column"],
                 k["predicted_cycles_per_sample"]))

    rng = np.random.default_rng(1)
    inputs = {name: rng.standard_normal(shape).astype(np.float32)
              for name, shape, _ in prog.inputs}
    outs = prog.run(inputs)
    ran = time.perf_counter()
    ref = weft.reference(model, inputs, samples=samples)
    referenced = time.perf_counter()
    for name, got in outs.items():
        err = float(np.max(np.abs(got - ref[name])))
        ok = np.allclose(got, ref[name], rtol=1e-3, atol=1e-4)
        print("output %r %s: max abs error %.3g against the host reference (%s)"
              % (name, list(got.shape), err, "match" if ok else "MISMATCH"))
        if not ok:
            return 1

    r = prog.run_figures
    s = prog.stats
    print("simulated %d cycles, latency %d, %.1f cycles per sample, "
          "utilization %.2f%%" % (r["cycles"], r["latency"],
                                  r["cycles_per_sample"], 100 * r["utilization"]))
    print("%d MACs, %d wavelet hops, %d instructions"
          % (s["macs"], s["wavelet_hops"], s["instructions"]))
    print("compile %.2f s, run %.2f s, host reference %.2f s"
          % (compiled - start, ran - compiled, referenced - ran))
    print("busy cycles per PE (%s):" % weft.HEATMAP_KINDS["busy"])
    print(weft.format_heatmap(prog.heatmap("busy")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
