"""The demo's output: progress lines with an end estimate, a grade table within 100 columns."""

from pathlib import Path

from autograder.grading.assurance.cohort import BLANK, REFERENCE, students, submitted_assignments
from autograder.grading.assurance.demo import DemoResult, format_demo_table
from autograder.grading.course.repo_paths import assignments
from autograder.grading.course.run_progress import StepProgress, clock_text
from autograder.grading.course.scores import Score


def synthetic_result(verdicts: dict[str, str] | None = None) -> DemoResult:
    """The real cohort and notebooks, with made-up scores (no nbgrader run)."""
    ids, cohort = assignments(), students()
    notebook_scores, cells = {}, {}
    for student in cohort:
        for assignment in submitted_assignments(student, ids):
            earned = 0.0 if student == BLANK else 97.5
            notebook_scores[(student, assignment)] = Score(earned, 100.0)
            cells[(student, assignment)] = {"test_x": Score(earned, 100.0)}
    return DemoResult(
        workspace=Path("/tmp/demo"),
        assignments=ids,
        students=cohort,
        notebook_scores=notebook_scores,
        cell_scores=cells,
        verdicts={s: (verdicts or {}).get(s, "") for s in cohort},
        flags=[],
        reports=[],
    )


def test_table_fits_in_100_columns_with_every_student_and_a_legend():
    problem = "01-worked-example: lost points on ['test_backward'], expected " + "x" * 150
    table = format_demo_table(synthetic_result({REFERENCE: problem}))
    lines = table.splitlines()
    too_wide = [line for line in lines if len(line) > 100]
    assert too_wide == [], "\n".join(too_wide)
    rows = {line.split()[0]: line for line in lines[2:] if line and not line.startswith(" ")}
    for student in students():
        assert student in rows, student
    assert rows[REFERENCE].split()[-2:] == [f"{97.5 * len(assignments()):g}", "NO"]
    assert rows[BLANK].split()[-2:] == ["0", "yes"]
    assert lines[2].split()[-1] == f"{100 * len(assignments())}"  # (points possible), summed
    assert lines[0].split()[1:4] == ["00", "01", "02"]
    assert "00: 00-recipe" in table and "09: 09-mixed-precision" in table
    assert "not as expected:" in table and "xxxx" in table  # the verdict, wrapped below


def test_progress_lines_say_step_time_elapsed_and_time_left():
    lines, now = [], [0.0]
    progress = StepProgress(
        {"00-recipe": 2, "01-worked-example": 6},
        "submissions",
        "grading",
        lines.append,
        clock=lambda: now[0],
    )
    now[0] = 10.0
    progress.start("00-recipe")
    now[0] = 40.0  # 30 s for 2 submissions: 15 s each, 6 to go
    progress.finish("00-recipe")
    progress.start("01-worked-example")
    now[0] = 100.0
    progress.finish("01-worked-example")
    assert lines == [
        "[1/2] grading 00-recipe (2 submissions) ...",
        "[1/2] 00-recipe: done in 0:30 (elapsed 0:40, about 1:30 left)",
        "[2/2] grading 01-worked-example (6 submissions) ...",
        "[2/2] 01-worked-example: done in 1:00 (elapsed 1:40)",
    ]


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.6, 61, 3600, 3725)] == [
        "0:00",
        "1:00",
        "1:01",
        "1:00:00",
        "1:02:05",
    ]


def test_the_sandbox_line_says_on_or_off_and_why():
    from autograder.grading.assurance.demo import sandbox_line

    assert sandbox_line("bubblewrap").startswith("on (bubblewrap)")
    off = sandbox_line("not sandboxed (bubblewrap (bwrap) is not installed)")
    assert off.startswith("OFF") and "not installed" in off
    assert sandbox_line("bubblewrap, not sandboxed (x)").startswith("OFF")
