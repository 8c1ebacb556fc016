"""The GPU path: parity checks on CUDA (skipped without it) and the gpu-check runner."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from autograder.checks.parity import check_parity
from autograder.engine.nn import Linear, mse_loss
from autograder.engine.tensor import Tensor
from autograder.grading.assurance import gpu_check
from autograder.grading.course import system_tools

# Tests that need CUDA carry the registered `cuda` marker and say why they are skipped.
CUDA_SKIP_REASON = system_tools.missing("cuda", "cuda not available: skipped")
DTYPES = [np.float32, np.float64]


def arrays(dtype, *shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def engine_mlp(x, target, w1, b1, w2, b2):
    first, second = Linear(4, 8), Linear(8, 3)
    first.weight, first.bias, second.weight, second.bias = w1, b1, w2, b2
    return mse_loss(second(first(x).relu()), target)


def torch_mlp(x, target, w1, b1, w2, b2):
    return F.mse_loss(F.linear(F.relu(F.linear(x, w1, b1)), w2, b2), target)


CASES = {
    "matmul": (lambda a, b: a @ b, None, [(5, 7), (7, 3)]),
    "broadcast add": (lambda a, b: a + b, None, [(4, 6), (6,)]),
    "sum and tanh": (lambda a: (a.tanh() * 2.0).sum(), None, [(3, 5)]),
    "mlp + mse": (engine_mlp, torch_mlp, [(6, 4), (6, 3), (8, 4), (8,), (3, 8), (3,)]),
}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("case", CASES)
@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_reference_engine_matches_torch_on_cuda(case, dtype):
    fn, torch_fn, shapes = CASES[case]
    names = "abcdefgh"[: len(shapes)]
    inputs = dict(zip(names, arrays(dtype, *shapes), strict=True))
    report = check_parity(
        fn, inputs, tensor_type=Tensor, torch_fn=torch_fn, devices=["cuda"], quiet=True
    )
    assert report.devices_checked == ["cuda"]
    assert report.dtype == np.dtype(dtype).name
    assert report.n_gradients == len(shapes)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason=CUDA_SKIP_REASON)
def test_cuda_runs_have_tf32_off_and_restore_it():
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = True
    try:
        with gpu_check.recording():
            a, b = arrays(np.float32, (64, 64), (64, 64))
            check_parity(lambda a, b: a @ b, {"a": a, "b": b}, tensor_type=Tensor, devices=["cuda"])
            rows = gpu_check.recorded_counts()
        assert torch.backends.cuda.matmul.allow_tf32 is True  # restored after the check
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before
    assert rows == [{"device": "cuda", "dtype": "float32", "tf32": "", "runs": 1}]


def test_recorder_counts_parity_runs_by_device_and_dtype():
    outside = gpu_check.recorded_counts()
    with gpu_check.recording():
        for dtype in DTYPES:
            (a,) = arrays(dtype, (3, 2))
            check_parity(lambda a: a.exp(), {"a": a}, tensor_type=Tensor, devices=["cpu"])
        rows = gpu_check.recorded_counts()
    assert rows == [
        {"device": "cpu", "dtype": "float32", "tf32": "", "runs": 1},
        {"device": "cpu", "dtype": "float64", "tf32": "", "runs": 1},
    ]
    # Afterwards the block's runs add to what was counted outside it (by the plugin, if any).
    after = {(r["device"], r["dtype"]): r["runs"] for r in gpu_check.recorded_counts()}
    before = {(r["device"], r["dtype"]): r["runs"] for r in outside}
    assert after.get(("cpu", "float32"), 0) == before.get(("cpu", "float32"), 0) + 1


def test_parity_calls_its_torch_run_listeners_until_removed():
    from autograder.checks import parity

    seen = []
    remove = parity.add_torch_run_listener(lambda device, dtype: seen.append((device, dtype)))
    (a,) = arrays(np.float64, (2, 2))
    try:
        check_parity(lambda a: a * 2.0, {"a": a}, tensor_type=Tensor, devices=["cpu"], quiet=True)
    finally:
        remove()
    check_parity(lambda a: a * 2.0, {"a": a}, tensor_type=Tensor, devices=["cpu"], quiet=True)
    assert seen == [("cpu", "float64")]


def test_without_cuda_it_says_why_and_exits_0(monkeypatch, capsys):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert gpu_check.main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith(gpu_check.NO_GPU + ": ")
    assert "CUDA" in out


def test_summary_and_problems():
    counts = {
        "tests": gpu_check.Counter({("cpu", "float64", ""): 5, ("cuda", "float32", "tf32 on"): 2}),
        "00-recipe": gpu_check.Counter({("cpu", "float64", ""): 3}),
        "02-no-checks": gpu_check.Counter(),
    }
    table = gpu_check.format_summary(counts)
    assert table.splitlines()[0].split() == ["source", "device", "float32", "float64", "tf32", "on"]
    assert "cuda" in table
    found = gpu_check.problems(counts, require_cuda=True)
    assert "tests: 2 CUDA run(s) with TF32 on" in found
    assert "00-recipe: no parity check ran on CUDA" in found
    assert any("not float32 and float64" in line for line in found)
    assert not any(line.startswith("02-no-checks") for line in found)
    assert gpu_check.problems({"00-recipe": counts["00-recipe"]}, require_cuda=False) == []


@pytest.mark.slow
def test_dry_run_counts_tests_and_notebook_checks(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(gpu_check, "cuda_status", lambda: (False, "pretend: no CUDA"))
    test_file = tmp_path / "test_tiny.py"
    test_file.write_text(
        "import numpy as np\n"
        "from autograder.engine.tensor import Tensor\n"
        "from autograder.checks.parity import check_parity\n\n"
        "def test_one():\n"
        "    a = np.ones((2, 2), dtype=np.float32)\n"
        "    check_parity(lambda a: a * 3.0, {'a': a}, tensor_type=Tensor, devices=['cpu'])\n"
    )
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(
        nbformat.v4.new_code_cell(
            "import numpy as np\n"
            "from autograder.engine.tensor import Tensor\n"
            "from autograder.checks.parity import check_parity\n"
            "check_parity(lambda a: a.relu(), {'a': np.arange(4.0) - 2}, tensor_type=Tensor,\n"
            "             quiet=True)"
        )
    )
    notebook_file = tmp_path / "tiny.ipynb"
    nbformat.write(notebook, notebook_file)
    argv = ["--cpu", "-n", "1", "--log-dir", str(tmp_path / "log")]
    argv += ["--tests", str(test_file), "--notebooks", str(notebook_file)]
    assert gpu_check.main(argv) == 0
    out = capsys.readouterr().out
    summary = out[out.index("\nsource") + 1 :].splitlines()
    assert summary[2].split() == ["tests", "cpu", "1", "0", "0"]
    assert summary[3].split()[:2] == ["tiny", "cpu"] and summary[3].split()[3] == "1"
    assert "gpu-check passed on the CPU only" in out
    json.loads((tmp_path / "log").glob("tests-*.json").__next__().read_text())
