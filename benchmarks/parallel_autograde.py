"""Wall time of parallel autograding against plain sequential ``nbgrader autograde``.

A cohort of N submissions of 00-recipe (the quickest notebook): the demo's reference, blank
and two planted bugs, copied under distinct student ids. Each mode grades its own copy of
one released workspace: plain ``nbgrader autograde`` (one process for everyone), then
``autograder.grading.pipeline.autograde`` on a local Dask cluster of 1, 2, 4... workers up to the
machine's cores, twice each: started within the timed run, then kept from that run (a
grading process keeps its local cluster: ``local_cluster``), then on a cluster of
``dask scheduler`` and two ``dask worker`` processes over 127.0.0.1 started beforehand
(``--scheduler``; its start is not timed, as an instructor's cluster is up already). Every mode
must give the same grades, cell by cell; the table says so. The floor is nbclient alone
executing each notebook nbgrader graded (hidden tests included) in a fresh kernel, one
after the other: what grading costs without nbgrader, a gradebook or isolation. Nothing
asserts a time.
"""

import os
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import nbformat

from autograder.grading.assurance.cohort import BLANK, REFERENCE, build_submission
from autograder.grading.authoring.release import generate_release
from autograder.grading.course.nbgrader_workspace import copy_workspace, run_nbgrader
from autograder.grading.course.repo_paths import REPO_ROOT, SOLUTIONS_DIR, notebook_path
from autograder.grading.course.scores import cell_scores
from autograder.grading.pipeline.autograde import GradingSettings, autograde, load_course
from autograder.grading.pipeline.autograde.cluster.local_cluster import close_kept_cluster
from benchmarks.dask_processes import dask_processes

ASSIGNMENT = "00-recipe"
KINDS = (REFERENCE, BLANK, "bug-power-rule", "bug-no-grad-not-restored")
DEFAULT_WORKSPACE = REPO_ROOT / "build" / "bench" / "parallel-autograde"


@dataclass(frozen=True)
class ModeRow:
    """One way of grading the cohort: its wall time, throughput and speedup."""

    mode: str
    submissions: int
    seconds: float
    per_minute: float
    speedup: float  # sequential nbgrader's time / this mode's
    same_grades: bool  # cell by cell equal to sequential nbgrader's
    overhead: float | None = None  # seconds per submission over the floor (one at a time)
    load: float | None = None  # 1-minute load average as the mode finished (a shared machine)

    def as_dict(self) -> dict[str, Any]:
        """The row for the JSON output."""
        return asdict(self)


def build_template(root: Path, submissions: int) -> tuple[Path, list[str]]:
    """Release 00-recipe in a fresh workspace and hand in ``submissions`` notebooks."""
    course = generate_release(root, [ASSIGNMENT])
    notebooks = {k: build_submission(k, ASSIGNMENT, SOLUTIONS_DIR, course.release) for k in KINDS}
    students = []
    for index in range(submissions):
        kind = KINDS[index % len(KINDS)]
        student = f"s{index:03d}-{kind}"
        target = notebook_path(course.submitted / student, ASSIGNMENT)
        target.parent.mkdir(parents=True)
        nbformat.write(notebooks[kind], target)
        students.append(student)
    return root, students


def grades(root: Path, students: list[str]) -> dict[str, Any]:
    db_url = load_course(root).db_url
    return {s: cell_scores(db_url, s, ASSIGNMENT) for s in students}


def execute_only(root: Path, students: list[str]) -> float:
    """Seconds nbclient alone takes to execute each autograded notebook in a fresh kernel."""
    from nbclient import NotebookClient

    autograded = load_course(root).autograded
    started = time.perf_counter()
    for student in students:
        path = notebook_path(autograded / student, ASSIGNMENT)
        notebook = nbformat.read(path, as_version=4)
        client = NotebookClient(
            notebook,
            timeout=120,
            allow_errors=True,
            shutdown_kernel="immediate",
            resources={"metadata": {"path": str(path.parent)}},
        )
        client.execute()
    return time.perf_counter() - started


def worker_counts(cores: int | None = None) -> list[int]:
    """1, 2, 4... up to the cores (at least 1 and 2)."""
    cores = cores or os.cpu_count() or 1
    counts = [1, 2]
    while counts[-1] * 2 <= cores:
        counts.append(counts[-1] * 2)
    if cores > counts[-1]:
        counts.append(cores)
    return counts


def run_parallel_benchmark(
    workspace: Path = DEFAULT_WORKSPACE,
    submissions: int = 40,
    workers: list[int] | None = None,
    cluster_workers: int = 2,
) -> list[ModeRow]:
    """Grade the cohort sequentially with nbgrader, then with ``autograde`` per worker count
    on a local cluster, then on a cluster of ``cluster_workers`` separate worker processes
    (none: 0)."""
    workspace = workspace.resolve()
    template, students = build_template(workspace / "template", submissions)
    timings: list[tuple[str, float, dict[str, Any]]] = []

    root = copy_workspace(template, workspace / "sequential")
    started = time.perf_counter()
    run_nbgrader(root, "autograde", ASSIGNMENT)
    timings.append(("nbgrader autograde (sequential)", time.perf_counter() - started, {}))
    loads = [os.getloadavg()[0]]
    reference = grades(root, students)
    floor = execute_only(root, students)
    floor_load = os.getloadavg()[0]

    for count in workers or worker_counts():
        # The first run starts the process's local cluster of ``count`` workers; the second
        # grades on it as kept (as every later notebook or batch of a grading process does).
        for cluster in ("started", "kept"):
            root = copy_workspace(template, workspace / f"workers-{count}-{cluster}")
            run = autograde(root, [ASSIGNMENT], GradingSettings(workers=count, progress=False))[0]
            mode = f"autograde(workers={count}), cluster {cluster}"
            timings.append((mode, run.wall_seconds, grades(root, students)))
            loads.append(os.getloadavg()[0])
    close_kept_cluster()
    if cluster_workers:
        root = copy_workspace(template, workspace / "dask-processes")
        with dask_processes(cluster_workers) as address:
            run = autograde(root, [ASSIGNMENT], GradingSettings(scheduler=address, progress=False))[
                0
            ]
        mode = f"dask scheduler + {cluster_workers} dask worker processes (127.0.0.1)"
        timings.append((mode, run.wall_seconds, grades(root, students)))
        loads.append(os.getloadavg()[0])

    baseline = timings[0][1]
    rows = [
        ModeRow("nbclient execute only (floor)", submissions, floor, 0, 0, True, 0.0, floor_load)
    ]
    rows = [replace(rows[0], per_minute=60 * submissions / floor, speedup=baseline / floor)]
    for (mode, seconds, graded), load in zip(timings, loads, strict=True):
        one_at_a_time = mode.startswith(("nbgrader", "autograde(workers=1)"))
        rows.append(
            ModeRow(
                mode=mode,
                submissions=submissions,
                seconds=seconds,
                per_minute=60 * submissions / seconds,
                speedup=baseline / seconds,
                same_grades=not graded or graded == reference,
                overhead=(seconds - floor) / submissions if one_at_a_time else None,
                load=load,
            )
        )
    return rows


def format_parallel_table(rows: list[ModeRow]) -> str:
    """Mode, submissions, wall time, per minute, speedup, overhead per submission over the
    floor (modes grading one at a time only), same grades, the load average after it."""
    from autograder.checks.text_table import format_columns

    header = ["mode", "submissions", "wall time", "per minute", "speedup", "over floor"]
    header += ["same grades", "load"]
    body = [
        [
            row.mode,
            str(row.submissions),
            f"{row.seconds:.1f} s",
            f"{row.per_minute:.1f}",
            f"{row.speedup:.2f}x",
            "-" if row.overhead is None else f"{row.overhead:+.2f} s",
            "yes" if row.same_grades else "NO",
            "-" if row.load is None else f"{row.load:.1f}",
        ]
        for row in rows
    ]
    return "\n".join(format_columns(header, body, right={1, 2, 3, 4, 5, 7}))
