"""Optionally set the tests of a flagged exercise to 0 in the gradebook, and the setting for it.

Off by default (``c.CourseIntegrity.zero_flagged_exercises`` in nbgrader_config.py): a flag is
evidence for an instructor, so zeroing is a course's explicit choice.
"""

from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from traitlets import Bool
from traitlets.config import Configurable
from traitlets.config.loader import PyFileConfigLoader

from autograder.grading.pipeline.integrity.cells import (
    exercise_of_added,
    nbgrader_metadata,
    read_notebook,
)
from autograder.grading.pipeline.integrity.flags import CHEATING_RULES, Flag

# Code that patches names, runs other code or reads files changes what every later cell
# does (a patched check passes every test after it), so these flags reach later exercises
# too; an autograd import only answers its own exercise (later uses are flagged themselves).
REACHES_LATER_CELLS = frozenset(
    {"monkeypatch", "dynamic-code", "file-access"}
    | (CHEATING_RULES - {"autograd-import", "runtime-autograd"})
)


class CourseIntegrity(Configurable):
    """The integrity scan's settings, read from nbgrader_config.py."""

    zero_flagged_exercises = Bool(
        False,
        help="Set the tests of an exercise to 0 when the integrity scan flags its code.",
    ).tag(config=True)


def zero_flagged_setting(config_path: Path) -> bool:
    """``c.CourseIntegrity.zero_flagged_exercises`` from an nbgrader config file (default False)."""
    config = PyFileConfigLoader(config_path.name, path=str(config_path.parent)).load_config()
    return CourseIntegrity(config=config).zero_flagged_exercises


def exercises(source_notebook: Path) -> dict[str, list[str]]:
    """Solution grade_id -> its test cells: graded cells after it, up to the next solution."""
    notebook = read_notebook(source_notebook)
    tests: dict[str, list[str]] = {}
    current: str | None = None
    for cell in notebook.cells:
        metadata = nbgrader_metadata(cell)
        if metadata.get("solution"):
            current = metadata["grade_id"]
            tests[current] = []
        if metadata.get("grade") and current is not None:
            tests[current].append(metadata["grade_id"])
    return tests


def flagged_exercise(flag: Flag, tests: dict[str, list[str]]) -> str | None:
    """The exercise a flag's cell belongs to: its own solution cell, or an added cell's."""
    if flag.cell in tests:
        return flag.cell
    return exercise_of_added(flag.cell)


def affected_exercises(flag: Flag, tests: dict[str, list[str]]) -> list[str]:
    """The exercises whose tests a flag discredits: its own, and later ones for some rules."""
    exercise = flagged_exercise(flag, tests)
    if exercise not in tests:
        return []
    ordered = list(tests)  # notebook order
    if flag.rule in REACHES_LATER_CELLS:
        return ordered[ordered.index(exercise) :]
    return [exercise]


def zero_flagged_exercises(
    db_url: str,
    flags: list[Flag],
    source_notebook: Path,
    rules: frozenset[str] = CHEATING_RULES,
) -> list[tuple[str, str, str]]:
    """Score 0 for the tests of each flagged exercise, with a comment on its solution cell.

    A flag of a rule in REACHES_LATER_CELLS also zeroes every later exercise's tests.

    ``source_notebook`` is the instructor's notebook (source/NN/NN.ipynb): its folder names
    the assignment and its stem the notebook. Only flags of ``rules`` on this assignment
    count; a student without an autograded submission is skipped. Returns the
    (student, assignment, test grade_id) triples set to 0.
    """
    assignment, notebook_id = source_notebook.parent.name, source_notebook.stem
    tests = exercises(source_notebook)
    reasons: dict[tuple[str, str], list[Flag]] = {}
    for flag in flags:
        if flag.rule not in rules or flag.assignment != assignment:
            continue
        for exercise in affected_exercises(flag, tests):
            reasons.setdefault((flag.student, exercise), []).append(flag)
    zeroed: list[tuple[str, str, str]] = []
    with Gradebook(db_url) as gradebook:
        for (student, exercise), found in sorted(reasons.items()):
            try:
                grades = [
                    gradebook.find_grade(test, notebook_id, assignment, student)
                    for test in tests[exercise]
                ]
                comment = gradebook.find_comment(exercise, notebook_id, assignment, student)
            except MissingEntry:
                continue
            for grade in grades:
                grade.manual_score = 0.0
                grade.extra_credit = None
                grade.needs_manual_grade = False
                zeroed.append((student, assignment, grade.name))
            comment.manual_comment = zero_comment(found)
        gradebook.db.commit()
    return zeroed


def zero_comment(flags: list[Flag]) -> str:
    """The comment a student and grader see on an exercise whose tests were set to 0."""
    lines = [f"- {flag.cell}, line {flag.line}: {flag.detail} [{flag.rule}]" for flag in flags]
    return "Tests of this exercise set to 0 by the integrity scan:\n" + "\n".join(lines)
