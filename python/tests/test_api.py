"""Tests of the `weft` Python package (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 -m unittest discover -s python/tests

ctest runs them (entry python-api). WEFT_SOURCE_DIR names the checkout (for
examples/*.onnx; by default the directory above python/), WEFT_TOOLS_DIR the
directory of weftc (build/bin; ctest sets it).
"""

import os
import subprocess
import tempfile
import threading
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import weft

SOURCE_DIR = os.environ.get(
    "WEFT_SOURCE_DIR",
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
)
DENSE = os.path.join(SOURCE_DIR, "examples", "dense.onnx")


def mlp(k=64, h=48, m=10, batch="N", seed=0, softmax=True):
    """x[batch, k] -> Gemm -> Relu -> Gemm (-> Softmax), and its weights."""
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((k, h)) / np.sqrt(k)).astype(np.float32)
    b1 = (rng.standard_normal(h) / 8).astype(np.float32)
    w2 = (rng.standard_normal((h, m)) / np.sqrt(h)).astype(np.float32)
    b2 = (rng.standard_normal(m) / 8).astype(np.float32)
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"], name="act1"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["z" if softmax else "y"], name="fc2"),
    ]
    if softmax:
        nodes.append(helper.make_node("Softmax", ["z"], ["y"], name="probs", axis=1))
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, m])],
        [numpy_helper.from_array(a, n) for a, n in
         ((w1, "w1"), (b1, "b1"), (w2, "w2"), (b2, "b2"))],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model, (w1, b1, w2, b2)


def numpy_mlp(x, weights, softmax=True):
    w1, b1, w2, b2 = (w.astype(np.float64) for w in weights)
    z = np.maximum(x.astype(np.float64) @ w1 + b1, 0) @ w2 + b2
    if not softmax:
        return z
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


class CompileAndRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model, cls.weights = mlp()
        cls.prog = weft.compile(cls.model, grid="8x8", samples=4)
        rng = np.random.default_rng(1)
        cls.x = rng.standard_normal((4, 64)).astype(np.float32)
        cls.outs = cls.prog.run({"x": cls.x})

    def test_ports(self):
        self.assertEqual(self.prog.inputs, [("x", (4, 64), "float32")])
        self.assertEqual(self.prog.outputs, [("y", (4, 10), "float32")])
        self.assertEqual(self.prog.figures["grid"], (8, 8))
        self.assertEqual(self.prog.figures["batch"], 4)
        self.assertEqual([k["name"] for k in self.prog.kernels], ["fc1", "fc2", "probs"])

    def test_matches_reference_and_numpy(self):
        y = self.outs["y"]
        self.assertEqual(y.shape, (4, 10))
        self.assertEqual(y.dtype, np.float32)
        ref = weft.reference(self.model, {"x": self.x}, samples=4)
        self.assertEqual(list(ref), ["y"])
        np.testing.assert_allclose(y, ref["y"], rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(y, numpy_mlp(self.x, self.weights), rtol=1e-3, atol=1e-5)
        self.assertFalse(np.allclose(y, y[::-1]))  # the samples differ

    def test_other_sample_counts(self):
        # [N, ...] streams N samples whatever the batch compiled for.
        x = np.random.default_rng(2).standard_normal((7, 64)).astype(np.float32)
        y = self.prog.run(x)["y"]
        self.assertEqual(y.shape, (7, 10))
        np.testing.assert_allclose(y, numpy_mlp(x, self.weights), rtol=1e-3, atol=1e-5)
        self.assertEqual(self.prog.stats["samples"], 7)
        # Leave the class's run as the last one.
        self.prog.run({"x": self.x})

    def test_stats(self):
        s = self.prog.stats
        self.assertEqual(s["status"], "done")
        self.assertEqual(s["samples"], 4)
        self.assertEqual(len(s["sample_done"]), 4)
        self.assertEqual(s["model_macs_per_sample"], 64 * 48 + 48 * 10)
        self.assertEqual(s["macs"], 4 * s["executed_macs_per_sample"])
        self.assertGreater(s["cycles"], 0)
        self.assertEqual(sum(p["busy_cycles"] for p in s["pes"]), s["busy_pe_cycles"])
        r = self.prog.run_figures
        self.assertEqual(r["cycles"], s["cycles"])
        self.assertGreater(r["utilization"], 0)
        self.assertLess(r["utilization"], 1)
        self.assertEqual(set(r["kernels"]), {"fc1", "fc2", "probs"})

    def test_heatmaps(self):
        s = self.prog.stats
        busy = self.prog.heatmap("busy")
        self.assertEqual(busy.shape, (8, 8))
        self.assertEqual(int(busy.sum()), s["busy_pe_cycles"])
        self.assertEqual(int(self.prog.heatmap("macs").sum()), s["macs"])
        self.assertEqual(int(self.prog.heatmap("hops").sum()), s["wavelet_hops"])
        self.assertEqual(int(self.prog.heatmap("instructions").sum()), s["instructions"])
        memory, layer = self.prog.heatmap("memory"), self.prog.heatmap("layer")
        for p in s["pes"]:
            self.assertEqual(memory[p["y"], p["x"]], 2 * p["memory_words_used"])
            self.assertEqual(layer[p["y"], p["x"]], p["layer"])
            self.assertEqual(busy[p["y"], p["x"]], p["busy_cycles"])
        self.assertGreater(int(memory.max()), 0)
        self.assertEqual(set(weft.HEATMAP_KINDS), {
            "busy", "ce_busy", "instructions", "macs", "flops", "hops",
            "hops_north", "hops_east", "hops_south", "hops_west", "hops_ramp",
            "router_queue", "ce_queue", "memory", "colors", "layer"})
        # Link load per direction adds up to the hops.
        dirs = ("north", "east", "south", "west", "ramp")
        per_dir = [self.prog.heatmap("hops_" + d) for d in dirs]
        np.testing.assert_array_equal(sum(per_dir), self.prog.heatmap("hops"))
        for p in s["pes"]:
            for d, h in zip(dirs, per_dir):
                self.assertEqual(h[p["y"], p["x"]], p["hops"][d])
        colors = self.prog.heatmap("colors")
        self.assertGreater(int(colors.max()), 0)
        self.assertTrue(((colors > 0) <= (layer >= 0)).all())
        text = weft.format_heatmap(busy)
        self.assertEqual(len(text.splitlines()), 8)
        self.assertIn("@", text)

    def test_report(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "report.html")
            self.prog.report(path)
            with open(path, encoding="utf-8") as f:
                page = f.read()
            self.assertTrue(page.startswith("<!DOCTYPE html>"))
            self.assertIn('"layers":["fc1","fc2","probs"]', page)
            self.assertIn('["samples","4"]', page)
            self.assertIn('"name":"hops_east"', page)
            self.assertNotIn("http://", page.replace("http://www.w3.org", ""))
            again = os.path.join(tmp, "again.html")
            self.prog.report(again)
            with open(again, encoding="utf-8") as f:
                self.assertEqual(f.read(), page)
            with self.assertRaisesRegex(weft.Error, "cannot write"):
                self.prog.report(os.path.join(tmp, "no", "such", "dir", "r.html"))

    def test_unknown_heatmap_kind(self):
        with self.assertRaisesRegex(ValueError, "unknown heatmap kind 'heat'.*busy.*memory"):
            self.prog.heatmap("heat")

    def test_save_and_load(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "mlp.wfb")
            self.prog.save(path)
            loaded = weft.load(path)
            self.assertIsNone(loaded.stats)
            self.assertEqual(loaded.kernels, [])
            self.assertNotIn("batch", loaded.figures)
            self.assertEqual(loaded.figures["grid"], (8, 8))
            # Memory and layers come from the binary: no run needed.
            np.testing.assert_array_equal(loaded.heatmap("memory"), self.prog.heatmap("memory"))
            with self.assertRaisesRegex(weft.Error, "needs a run"):
                loaded.heatmap("busy")
            with self.assertRaisesRegex(weft.Error, "needs a run"):
                loaded.report(os.path.join(tmp, "r.html"))
            (name, _, _), = loaded.inputs
            outs = loaded.run({name: self.x})
            (out_name, _, _), = loaded.outputs
            np.testing.assert_array_equal(outs[out_name], self.outs["y"])
            self.assertEqual(loaded.stats["cycles"], self.prog.stats["cycles"])
            np.testing.assert_array_equal(loaded.heatmap("busy"), self.prog.heatmap("busy"))
            # A loaded program's report has the layers, without predictions.
            loaded.report(os.path.join(tmp, "r.html"))
            with open(os.path.join(tmp, "r.html"), encoding="utf-8") as f:
                page = f.read()
            self.assertIn('["fc1","",', page)
            self.assertNotIn('"utilization"', page)
            again = os.path.join(tmp, "again.wfb")
            loaded.save(again)
            with open(path, "rb") as a, open(again, "rb") as b:
                self.assertEqual(a.read(), b.read())


class Models(unittest.TestCase):
    def test_dense_example_from_path(self):
        prog = weft.compile(DENSE, grid="auto", max_grid="8x8")
        (name, shape, _), = prog.inputs
        x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
        y = prog.run({name: x})
        ref = weft.reference(DENSE, {name: x})
        self.assertEqual(list(y), list(ref))
        for k in ref:
            np.testing.assert_allclose(y[k], ref[k], rtol=1e-3, atol=1e-4)
        self.assertNotEqual(prog.figures["grid_auto"], "")

    def test_default_grid_is_auto(self):
        # Without grid, the fabric --grid auto picks, up to the whole machine.
        prog = weft.compile(DENSE)
        self.assertEqual(prog.figures["grid"], (1, 1))
        self.assertIn("up to 750x994", prog.figures["grid_auto"])

    def test_constants(self):
        # A weight the model takes as an input, frozen at compile time.
        rng = np.random.default_rng(4)
        w = rng.standard_normal((16, 8)).astype(np.float32)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["x", "w"], ["y"], name="mm")], "mm",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16]),
             helper.make_tensor_value_info("w", TensorProto.FLOAT, [16, 8])],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        prog = weft.compile(model, constants={"w": w})
        self.assertEqual([n for n, _, _ in prog.inputs], ["x"])
        x = rng.standard_normal((1, 16)).astype(np.float32)
        y = prog.run(x)["y"]
        np.testing.assert_allclose(y, x @ w, rtol=1e-4, atol=1e-5)
        ref = weft.reference(model, {"x": x, "w": w})
        np.testing.assert_allclose(y, ref["y"], rtol=1e-3, atol=1e-4)

    def test_mixed_precision(self):
        model, weights = mlp(softmax=False, seed=5)
        prog = weft.compile(model, precision="mixed", samples=2)
        self.assertEqual(prog.figures["precision"], "mixed")
        x = np.random.default_rng(6).standard_normal((2, 64)).astype(np.float32)
        y = prog.run({"x": x})["y"]
        np.testing.assert_allclose(y, numpy_mlp(x, weights, softmax=False), rtol=2e-2, atol=2e-2)


class SameAsWeftc(unittest.TestCase):
    @unittest.skipUnless(os.environ.get("WEFT_TOOLS_DIR"), "needs WEFT_TOOLS_DIR (ctest sets it)")
    def test_save_writes_the_bytes_weftc_writes(self):
        weftc = os.path.join(os.environ["WEFT_TOOLS_DIR"], "weftc")
        model = os.path.join(SOURCE_DIR, "examples", "mlp.onnx")
        with tempfile.TemporaryDirectory() as tmp:
            a, b = os.path.join(tmp, "weftc.wfb"), os.path.join(tmp, "python.wfb")
            subprocess.run([weftc, "compile", model, "--grid", "auto", "-o", a], check=True)
            weft.compile(model, grid="auto").save(b)
            with open(a, "rb") as fa, open(b, "rb") as fb:
                self.assertEqual(fa.read(), fb.read())


class Errors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.model, _ = mlp(batch=1)
        cls.prog = weft.compile(cls.model, grid="8x8")

    def test_unsupported_op_names_node_op_and_reason(self):
        graph = helper.make_graph(
            [helper.make_node("NonZero", ["x"], ["y"], name="nz")], "g",
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
            [helper.make_tensor_value_info("y", TensorProto.INT64, None)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        with self.assertRaisesRegex(weft.CompileError,
                                    r"node 'nz' \(NonZero\): operator is not supported"):
            weft.compile(model)
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "nz.onnx")
            onnx.save(model, path)
            with self.assertRaisesRegex(weft.CompileError, "nz.onnx"):
                weft.compile(path)
            with self.assertRaisesRegex(weft.CompileError, "NonZero"):
                weft.reference(path, {"x": np.zeros(4, np.float32)})

    def test_bad_grid(self):
        with self.assertRaisesRegex(weft.CompileError, "grid|fabric") as cm:
            weft.compile(self.model, grid="0x3")
        self.assertIn("0x3", str(cm.exception))
        with self.assertRaisesRegex(weft.CompileError, "banana"):
            weft.compile(self.model, grid="banana")

    def test_too_small_grid(self):
        big, _ = mlp(k=784, h=256, batch=1)
        with self.assertRaisesRegex(weft.CompileError, "does not fit"):
            weft.compile(big, grid="2x2")

    def test_bad_options(self):
        with self.assertRaisesRegex(weft.CompileError, "precision must be fp32 or mixed"):
            weft.compile(self.model, precision="fp8")
        with self.assertRaisesRegex(ValueError, "positive"):
            weft.compile(self.model, samples=0)
        with self.assertRaisesRegex(weft.CompileError, "fixed at 8"):
            weft.compile(DENSE, samples=4)
        with self.assertRaises(TypeError):
            weft.compile(42)
        with self.assertRaisesRegex(weft.CompileError, "no-such.onnx"):
            weft.compile("/no-such.onnx")

    def test_wrong_inputs(self):
        x = np.zeros((1, 64), np.float32)
        with self.assertRaisesRegex(ValueError, "no input 'z'.*'x'"):
            self.prog.run({"x": x, "z": x})
        with self.assertRaisesRegex(ValueError, "input 'x' is not given"):
            self.prog.run({})
        with self.assertRaisesRegex(ValueError, r"input 'x' is \[1, 64\].*not \[1, 63\]"):
            self.prog.run({"x": np.zeros((1, 63), np.float32)})
        with self.assertRaisesRegex(ValueError, "graph has no input 'q'"):
            weft.reference(self.model, {"x": x, "q": x})
        with self.assertRaisesRegex(ValueError, r"input 'x' is f32\[1, 64\], not \[1, 3\]"):
            weft.reference(self.model, {"x": np.zeros((1, 3), np.float32)})

    def test_cycle_limit(self):
        with self.assertRaisesRegex(weft.SimulationError, "cycle"):
            self.prog.run(np.zeros((1, 64), np.float32), max_cycles=10)
        # The statistics are those of the stopped run.
        self.assertEqual(self.prog.stats["status"], "cycle-limit")
        self.assertEqual(self.prog.stats["cycles"], 10)

    def test_corrupt_binaries(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = os.path.join(tmp, "good.wfb")
            self.prog.save(good)
            with open(good, "rb") as f:
                data = f.read()
            cases = {
                "garbage": b"not a weft binary at all",
                "empty": b"",
                "truncated": data[: len(data) // 2],
                "flipped": data[:40] + bytes([data[40] ^ 0xFF]) + data[41:],
            }
            for name, content in cases.items():
                path = os.path.join(tmp, name + ".wfb")
                with open(path, "wb") as f:
                    f.write(content)
                with self.subTest(name):
                    with self.assertRaisesRegex(weft.Error, "cannot load"):
                        weft.load(path)
            with self.assertRaisesRegex(weft.Error, "cannot load"):
                weft.load(os.path.join(tmp, "missing.wfb"))
            with self.assertRaisesRegex(weft.Error, "cannot write"):
                self.prog.save(os.path.join(tmp, "no", "such", "dir.wfb"))


class Threads(unittest.TestCase):
    def test_gil_is_released_while_simulating(self):
        # A long run in this thread; another Python thread must keep running
        # while it simulates (it could not if the GIL were held).
        model, weights = mlp(k=784, h=256, m=10, softmax=False, seed=7)
        prog = weft.compile(model, grid="16x16", samples=32)
        x = np.random.default_rng(8).standard_normal((32, 784)).astype(np.float32)
        ticks = []
        stop = threading.Event()

        def ticker():
            while not stop.is_set():
                ticks.append(time.perf_counter())
                time.sleep(0.001)

        t = threading.Thread(target=ticker)
        t.start()
        try:
            start = time.perf_counter()
            y = prog.run({"x": x})["y"]
            end = time.perf_counter()
        finally:
            stop.set()
            t.join()
        self.assertGreater(end - start, 0.05, "the run is too short to tell")
        inside = [s for s in ticks if start + 0.2 * (end - start) < s < end - 0.2 * (end - start)]
        self.assertGreater(len(inside), 5)
        np.testing.assert_allclose(y, numpy_mlp(x, weights, softmax=False), rtol=1e-3, atol=1e-4)

    def test_concurrent_compiles_and_runs(self):
        results, errors = {}, []

        def work(seed):
            try:
                model, weights = mlp(seed=seed, softmax=False)
                prog = weft.compile(model, samples=2)
                x = np.random.default_rng(seed).standard_normal((2, 64)).astype(np.float32)
                results[seed] = (prog.run({"x": x})["y"], numpy_mlp(x, weights, softmax=False))
            except Exception as e:  # reported below
                errors.append(e)

        threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        self.assertEqual(sorted(results), [0, 1, 2, 3])
        for got, want in results.values():
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)



class Replicas(unittest.TestCase):
    """Copies of the network on bands of rows, fed round robin."""

    def test_copies_match_numpy_in_sample_order(self):
        model, weights = mlp()
        prog = weft.compile(model, grid="16x16", replicas=3, samples=7)
        self.assertEqual(prog.figures["replicas"], 3)
        self.assertTrue(prog.figures["replica_plan"].startswith("3 copies of 16x"))
        x = np.random.default_rng(3).standard_normal((7, 64)).astype(np.float32)
        y = prog.run({"x": x})["y"]
        self.assertEqual(y.shape, (7, 10))
        np.testing.assert_allclose(y, numpy_mlp(x, weights), rtol=1e-3, atol=1e-5)
        f = prog.run_figures
        self.assertEqual(f["replicas"], 3)
        self.assertEqual(f["samples"], 7)
        self.assertGreater(f["samples_per_million_cycles"], 0)
        self.assertGreater(f["replica"]["utilization"], f["utilization"])
        # Another count of samples deals as well.
        x2 = np.random.default_rng(4).standard_normal((2, 64)).astype(np.float32)
        np.testing.assert_allclose(
            prog.run(x2)["y"], numpy_mlp(x2, weights), rtol=1e-3, atol=1e-5
        )

    def test_auto_and_errors(self):
        model, _ = mlp()
        prog = weft.compile(model, grid="16x16", replicas="auto", samples=4)
        self.assertGreaterEqual(prog.figures["replicas"], 1)
        self.assertIn("bands fit", prog.figures["replica_plan"])
        with self.assertRaisesRegex(weft.CompileError, "at least 1, not '0'"):
            weft.compile(model, grid="16x16", replicas=0)
        with self.assertRaisesRegex(weft.CompileError, "17 copies need at least one row each"):
            weft.compile(model, grid="16x16", replicas=17)

if __name__ == "__main__":
    unittest.main()
