"""The benchmarks run on tiny sizes and return rows; nothing here asserts anything about time."""

import json
import math
import sys

import nbformat
import numpy as np
import pytest

from autograder.grading.course.repo_paths import REPO_ROOT

# benchmarks/ is a folder of the repository, not part of the installed package: import it
# from the checkout, as `python -m benchmarks.run` does from the repository root.
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from benchmarks import engine_speed, grading_time, memory, profile_engine, run, timing  # noqa: E402


def test_every_speed_workload_times_five_implementations():
    workloads = engine_speed.default_workloads(scale=0.05)
    rows = engine_speed.run_speed(workloads, repeat=2, min_sample_s=0.0002)
    assert len(rows) == len(workloads) == 15
    for row in rows:
        assert set(row.timings) == set(engine_speed.IMPLEMENTATIONS)
        assert all(t.median_s > 0 and t.samples == 2 for t in row.timings.values())
        assert math.isfinite(row.ratio("engine"))
        json.dumps(row.as_dict())
    table = engine_speed.format_speed_table(rows)
    assert "step: mlp 784-256-10" in table and "engine/np" in table
    assert "hips autograd" in table and "mygrad/np" in table


@pytest.mark.parametrize("index", [0, 1, 2])
def test_mlp_implementations_compute_the_same_step(index):
    # The floor and torch must do the same work as the engine, or the ratios mean nothing.
    workload = engine_speed.default_workloads(scale=0.1)[index]
    assert engine_speed.same_result(workload, steps=2)


def test_agreement_check_fails_loudly_on_an_implementation_that_computes_otherwise(
    monkeypatch,
):
    # A peer whose update is off by one part in 1e8 must stop the run before any timing.
    from benchmarks import peers

    honest = peers.mygrad_mlp_step

    def slightly_off(x, target, params):
        return honest(x, target, [(w * (1 + 1e-8), b) for w, b in params])

    workloads = engine_speed.default_workloads(scale=0.1)[:1]
    engine_speed.check_implementations_agree(workloads)
    monkeypatch.setattr(peers, "mygrad_mlp_step", slightly_off)
    with pytest.raises(RuntimeError, match="mygrad ended with parameters that differ"):
        engine_speed.check_implementations_agree(workloads)


def test_memory_rows_for_both_ways_of_keeping_the_loss():
    # Large enough that each kept graph's activations (two 64x128 float64 arrays, 0.125 MiB)
    # stand far above what other threads of the process allocate meanwhile (tracemalloc
    # counts them all: a kept Dask client's loop, for one).
    rows = memory.run_memory(models=[((128, 128, 8), 64, np.float64)], steps=3)
    assert [row.kept for row in rows] == ["loss.item()", "loss (graph)"]
    assert all(row.first_step_peak_mib > 0 for row in rows)
    assert rows[1].retained_mib - rows[0].retained_mib > 3 * 0.125
    assert "retained" in memory.format_memory_table(rows)


def test_profile_pieces_run_on_small_sizes():
    extra = profile_engine.extra_work(sizes=(8, 4, 2), batch=3, repeat=2)
    assert len(extra) == 4 and all(seconds > 0 for seconds in extra.values())
    assert "of floor" in profile_engine.format_extra_work(extra, 1e-4)
    report = profile_engine.cprofile_engine_step(sizes=(8, 4, 2), batch=3, steps=3, top=3)
    assert "ncalls" in report


def test_machine_info_names_the_blas():
    info = timing.machine_info()
    assert info["cores"] >= 1 and info["numpy_blas"] and info["openblas_core"]


def test_grading_table_points_to_the_parallel_benchmark():
    rows = [
        grading_time.GradingRow("autograde 00-recipe", 10, 3.0, "0.30 s per submission"),
        grading_time.GradingRow(
            "autograde, parallel", 0, float("nan"), grading_time.PARALLEL_ELSEWHERE
        ),
    ]
    table = grading_time.format_grading_table(rows)
    assert "3.0 s" in table and "autograde-parallel" in table


@pytest.mark.slow
def test_nbval_timing_on_a_tiny_notebook(tmp_path):
    notebook = nbformat.v4.new_notebook()
    notebook.cells.append(nbformat.v4.new_code_cell("print(1 + 1)"))
    nbformat.write(notebook, tmp_path / "tiny.ipynb")
    row = grading_time.time_nbval_suite([str(tmp_path / "tiny.ipynb")])
    assert row.notebooks == 1 and row.seconds > 0
    assert "1 passed" in row.note


def test_run_writes_json_for_a_section(tmp_path, capsys):
    assert run.main(["memory", "--quick", "--out", str(tmp_path)]) == 0
    assert "## Memory" in capsys.readouterr().out
    assert json.loads((tmp_path / "memory.json").read_text())["rows"]
    assert json.loads((tmp_path / "machine.json").read_text())["numpy"] == np.__version__


@pytest.mark.slow
def test_demo_autograde_timing_on_a_sample_of_the_cohort(tmp_path, monkeypatch):
    import autograder.grading.assurance.cohort

    # One notebook and two students (the sample grades one) keep this test short.
    for module in (grading_time, autograder.grading.assurance.cohort):
        monkeypatch.setattr(module, "assignments", lambda *args: ["00-recipe"])
    two = [autograder.grading.assurance.cohort.REFERENCE, autograder.grading.assurance.cohort.BLANK]
    monkeypatch.setattr(autograder.grading.assurance.cohort, "students", lambda: two)
    rows = grading_time.time_demo_autograde(tmp_path / "ws", sample=1)
    stages = [row.stage for row in rows]
    assert stages[:3] == [
        "generate_assignment (release)",
        "build cohort submissions",
        "autograde 00-recipe",
    ]
    assert rows[2].notebooks == 1 and rows[2].seconds > 0
    assert "1 of 2 students" in rows[3].note and "autograde-parallel" in rows[4].note
    assert len(list((tmp_path / "ws" / "submitted").iterdir())) == 1


def test_parallel_autograde_table_and_worker_counts():
    from benchmarks import parallel_autograde

    assert parallel_autograde.worker_counts(1) == [1, 2]
    assert parallel_autograde.worker_counts(6) == [1, 2, 4, 6]
    rows = [
        parallel_autograde.ModeRow("nbgrader autograde (sequential)", 40, 300.0, 8.0, 1.0, True),
        parallel_autograde.ModeRow("autograde(workers=2)", 40, 150.0, 16.0, 2.0, True),
    ]
    table = parallel_autograde.format_parallel_table(rows)
    assert "2.00x" in table and "same grades" in table


def test_notebook_times_run_each_notebook_in_a_scratch_copy_and_compare_to_a_baseline(tmp_path):
    from benchmarks import notebook_time

    folder = tmp_path / "99-tiny"
    folder.mkdir()
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell("open('written.txt', 'w').write('x')\nx = 1 + 1")]
    )
    path = folder / "99-tiny.ipynb"
    nbformat.write(notebook, path)
    rows = notebook_time.time_notebooks([path], repeat=2)
    assert [row.notebook for row in rows] == [notebook_time.EMPTY, "99-tiny"]
    assert all(len(row.seconds) == len(row.cpu_seconds) == 2 for row in rows)
    assert all(row.median_s > 0 and row.median_cpu_s >= 0 for row in rows)
    assert not (folder / "written.txt").exists()  # the run wrote in its scratch copy
    saved = tmp_path / "notebooks.json"
    saved.write_text(json.dumps({"rows": [row.as_dict() for row in rows]}))
    before = notebook_time.read_baseline(saved)
    table = notebook_time.format_notebook_table(rows, before)
    assert "99-tiny" in table and "CPU before" in table and "total" in table


def test_a_notebook_that_fails_stops_the_timing_with_its_error(tmp_path):
    from nbclient.exceptions import CellExecutionError

    from benchmarks import notebook_time

    folder = tmp_path / "98-broken"
    folder.mkdir()
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 / 0")])
    nbformat.write(notebook, folder / "98-broken.ipynb")
    with pytest.raises(CellExecutionError, match="ZeroDivisionError"):
        notebook_time.time_notebooks([folder / "98-broken.ipynb"])
