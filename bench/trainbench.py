"""What the training benchmarks share (bench/train_throughput.py,
bench/train_checkpoints.py): running a tool, and an MLP with its samples
and labels made as the tests make them."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def run(cmd):
    """Runs `cmd`, returns its output; exits with it when the command fails."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), r.stdout))
    return r.stdout


def make_mlp(model, x, labels, sizes, acts, samples):
    """test/models/gen_dense.py's MLP (seed 2, a dynamic batch) of `sizes`
    ("784-256-10") and `acts` ("relu,none"), and `samples` samples and
    labels from test/e2e/Inputs/train_torch.py (seed 3)."""
    run([PY, os.path.join(ROOT, "test/models/gen_dense.py"), "mlp", model,
         "--sizes", sizes.replace("-", ","), "--acts", acts,
         "--batch", "dynamic", "--seed", "2"])
    run([PY, os.path.join(ROOT, "test/e2e/Inputs/train_torch.py"),
         "data", model, x, labels, "--samples", str(samples), "--seed", "3"])
