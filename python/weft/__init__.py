"""weft: compile ONNX models for the wafer-scale fabric and run them.

    import weft
    prog = weft.compile("model.onnx", grid="auto", precision="fp32")
    outs = prog.run({"x": x})          # numpy in, dict of numpy arrays out
    prog.stats                         # the simulator's statistics of that run
    prog.save("model.wfb"); weft.load("model.wfb")
    ref = weft.reference("model.onnx", {"x": x})
    prog.heatmap("busy")               # per-PE figures, [height, width]
    prog.report("report.html")         # the run as one HTML page

The compiler, the simulator and the host reference run in this process
(the extension module weft._weft); each releases the GIL while it works.
docs/python.md describes the API, its errors and how it is built.
"""

import os
import tempfile

import numpy as np

from . import _weft
from ._weft import CompileError, Error, SimulationError

__all__ = [
    "compile",
    "load",
    "reference",
    "Program",
    "Error",
    "CompileError",
    "SimulationError",
    "HEATMAP_KINDS",
    "format_heatmap",
]

#: The kinds prog.heatmap() takes: name -> what it counts. "memory",
#: "colors" and "layer" come from the binary and need no run; the others are
#: the per-PE statistics of the last run.
HEATMAP_KINDS = {name: what for name, what, _ in _weft.HEATMAP_KINDS}


def _model_source(model):
    """(path, bytes or None) for a path, an onnx.ModelProto or bytes."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model), None
    if isinstance(model, (bytes, bytearray)):
        return "<bytes>", bytes(model)
    if hasattr(model, "SerializeToString"):
        name = getattr(getattr(model, "graph", None), "name", "") or "model"
        return "<onnx.ModelProto '%s'>" % name, model.SerializeToString()
    raise TypeError(
        "model must be a path, an onnx.ModelProto or serialized bytes, not %s"
        % type(model).__name__
    )


def _batch(samples, batch):
    if samples is not None and batch is not None and samples != batch:
        raise ValueError("samples=%r and batch=%r disagree" % (samples, batch))
    n = samples if samples is not None else batch
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n <= 0):
        raise ValueError("samples must be a positive number of samples, not %r" % (n,))
    return n


def compile(
    model,
    *,
    grid="auto",
    max_grid="750x994",
    precision="fp32",
    merge_lanes=False,
    samples=None,
    batch=None,
    constants=None,
    replicas=1,
):
    """Compiles an ONNX model (a path, an onnx.ModelProto or its bytes).

    grid: "WxH[,mem=B,colors=N,rq=N,cq=N]" or "auto[,...]" (the default:
    the smallest fabric up to max_grid, by default the whole 750x994
    machine, within 5% of the best predicted utilization);
    precision: "fp32" or "mixed"; merge_lanes: let a convolution merge its
    producer's row lanes; samples (or batch): the size bound to a symbolic
    batch dimension, the samples a run streams; constants: graph inputs
    frozen into the program, name -> numpy array or tensor file (.npy, .pb);
    replicas: copies of the network on bands of the fabric's rows, each fed
    its own samples round robin, an int or "auto" (docs/weftc.md,
    "Replicas"). The options are weftc's (docs/weftc.md). Raises
    CompileError with the compiler's message.
    """
    path, data = _model_source(model)
    n = _batch(samples, batch)
    with tempfile.TemporaryDirectory(prefix="weft-constants-") as tmp:
        specs = []
        for i, (name, value) in enumerate(sorted((constants or {}).items())):
            if isinstance(value, (str, os.PathLike)):
                file = os.fspath(value)
            else:
                file = os.path.join(tmp, "constant_%d.npy" % i)
                np.save(file, np.ascontiguousarray(value, dtype=np.float32))
            specs.append("%s=%s" % (name, file))
        program = _weft.compile(
            path,
            data,
            grid,
            max_grid,
            precision,
            bool(merge_lanes),
            n or 1,
            specs,
            str(replicas),
        )
    prog = Program(program, source=path)
    if n is not None and prog.figures["batch"] != n:
        raise CompileError(
            "the model's batch dimension is fixed at %d; samples=%d needs a "
            "symbolic batch dimension" % (prog.figures["batch"], n)
        )
    return prog


def load(path):
    """Loads a .wfb written by Program.save or `weftc compile`.

    A loaded program runs like a compiled one; its inputs and outputs are
    named after the binary's host streams and it has no compile figures.
    Raises Error when the file is not a valid program.
    """
    return Program(_weft.load(os.fspath(path)), source=os.fspath(path))


def reference(model, inputs, *, samples=None, batch=None):
    """Runs the model on the host reference: inputs name -> numpy array
    (converted to the graph's dtype), returns name -> numpy array."""
    path, data = _model_source(model)
    n = _batch(samples, batch)
    return _weft.reference(path, data, dict(inputs), n or 1)


class Program:
    """A compiled or loaded fabric program and its last run."""

    def __init__(self, program, source=""):
        self._p = program
        self.source = source

    def __repr__(self):
        f = self.figures
        return "<weft.Program %s on the %dx%d fabric, inputs %s, outputs %s>" % (
            f["name"],
            f["grid"][0],
            f["grid"][1],
            [n for n, _, _ in self.inputs],
            [n for n, _, _ in self.outputs],
        )

    @property
    def inputs(self):
        """[(name, shape, dtype)] of the streamed inputs, in order."""
        return self._p.inputs

    @property
    def outputs(self):
        """[(name, shape, dtype)] of the outputs, in order."""
        return self._p.outputs

    @property
    def figures(self):
        """The compile's figures (weftc run's first lines): grid, fabric,
        predicted cycles per sample, MACs per sample, colors; a loaded
        program has only its name, grid and fabric."""
        return self._p.figures

    @property
    def kernels(self):
        """The kernels in chain order, with their place and predicted cycles
        (empty for a loaded program)."""
        return self._p.kernels

    @property
    def stats(self):
        """The statistics of the last run, as `weftc run --stats` writes
        them (docs/simulator.md, "Statistics"), or None before a run."""
        return self._p.stats

    @property
    def run_figures(self):
        """The figures of the last run (docs/performance.md, "Definitions"):
        cycles, latency, cycles per sample, utilization, and per kernel its
        busiest PE's cycles per sample; None before a run."""
        return self._p.run_figures

    def run(self, inputs=None, *, max_cycles=None, threads=1, **named):
        """Runs the program on the simulated fabric.

        inputs: name -> numpy array (or one array for a one-input program),
        or the arrays as keyword arguments. An input of the graph's shape is
        the samples the program was compiled for; [N, ...] streams N samples.
        Returns name -> numpy array, shaped like the graph's outputs. Raises
        ValueError for a missing, unknown or misshapen input and
        SimulationError (with the simulator's report) on a deadlock, the
        cycle limit (max_cycles) or a program error.
        """
        if inputs is None:
            inputs = {}
        elif not isinstance(inputs, dict):
            if len(self.inputs) != 1:
                raise ValueError(
                    "the program has %d inputs: pass a dict name -> array"
                    % len(self.inputs)
                )
            inputs = {self.inputs[0][0]: inputs}
        inputs = dict(inputs, **named)
        if max_cycles is not None and max_cycles <= 0:
            raise ValueError("max_cycles must be positive, not %r" % (max_cycles,))
        return self._p.run(inputs, max_cycles or 0, threads)

    def save(self, path):
        """Writes the binary to a .wfb file (docs/binary-format.md)."""
        self._p.save(os.fspath(path))

    def heatmap(self, kind="busy"):
        """A per-PE figure as an int64 array [height, width]: one of
        HEATMAP_KINDS. Raises ValueError for an unknown kind and Error for a
        run statistic before a run."""
        return self._p.heatmap(kind)

    def report(self, path):
        """Writes the report page of the last run to `path`: one
        self-contained HTML file with the fabric drawn to scale, the
        heatmaps, each layer's predicted and simulated cycles per sample and
        the run's figures (docs/report.md). Raises Error before a run or
        when the file cannot be written."""
        self._p.report(os.fspath(path))


def format_heatmap(values, levels=" .:-=+*#%@"):
    """A 2-D array as text, one character per PE (rows top to bottom): the
    share of the largest value, from levels[0] (zero) to levels[-1]."""
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError("a heatmap is 2-D, not %d-D" % a.ndim)
    top = a.max() if a.size else 0.0
    rows = []
    for row in a:
        line = ""
        for v in row:
            if top <= 0 or v <= 0:
                line += levels[0]
            else:
                line += levels[1 + int(round((len(levels) - 2) * min(v / top, 1.0)))]
        rows.append(line)
    return "\n".join(rows)
