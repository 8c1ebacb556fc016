"""The red team: cheats graded in one run with honest students, by the real nbgrader.

Every cheat must end contained (no undue points unless flagged, none after zeroing, the
expected status, no lasting harm), and is filed in the module of the defence that stops it.
The run must finish with a record for
everyone, the honest students' grades must be what they get alone, and the report must show
the flags, the runtime record's among them, and the failures.
"""

import pytest
from report_page import Page

from autograder.checks.text_table import read_columns
from autograder.grading.assurance.redteam import (
    BY_DEFENCE,
    CHEATS,
    HONEST,
    format_red_team,
    run_red_team,
)
from autograder.grading.assurance.redteam.catalogue import misplaced
from autograder.grading.pipeline.report.gather import write_report
from autograder.grading.pipeline.report.model import NOT_FAILURES

pytestmark = pytest.mark.slow


def test_each_cheat_is_filed_under_its_defence():
    assert misplaced() == []
    assert {cheat.defence for cheat in CHEATS} == set(BY_DEFENCE)
    planted = {"scan": (*BY_DEFENCE["scan"], BY_DEFENCE["trusted"][0])}
    assert misplaced(planted) == [f"{BY_DEFENCE['trusted'][0].student}: scan -> trusted"]


@pytest.fixture(scope="module")
def red_team(tmp_path_factory):
    return run_red_team(tmp_path_factory.mktemp("red-team") / "course")


@pytest.mark.parametrize("cheat", CHEATS, ids=lambda cheat: cheat.student)
def test_each_cheat_is_contained(red_team, cheat):
    row = next(r for r in red_team.cheats if r.student == cheat.student)
    assert not row.verdict, f"{cheat.student} ({cheat.story}): {row.verdict}"


def test_the_run_grades_everyone(red_team):
    graded = {record.student for record in red_team.run.records}
    assert graded == {*HONEST, *(cheat.student for cheat in CHEATS)}


def test_honest_students_are_graded_as_alone(red_team):
    assert red_team.honest_problems() == []


def test_cheats_that_earn_points_are_the_flagged_ones(red_team):
    # With trusted verdicts and the sandbox no cheat may earn points unflagged; one that
    # earns any is flagged and loses them with zeroing. (That the cheats work where the
    # tests share the student's kernel is shown by tests/grading/pipeline/test_trusted_grading.py.)
    earning = [row for row in red_team.cheats if row.score.score > row.honest_points]
    assert all(row.flagged_rules and row.zeroed.score <= row.honest_points for row in earning)
    # The run is tested by cheats that act: the runtime record saw what many of them tried.
    tried = [
        row for row in red_team.cheats if any(f.startswith("runtime-") for f in row.flagged_rules)
    ]
    assert len(tried) >= 10, [row.student for row in tried]


def test_table_has_a_row_per_student_each_contained(red_team):
    # The rows themselves: the footer below the table names every student too.
    table = format_red_team(red_team)
    graded = [r for r in red_team.run.records if r.status != "skipped"]
    print(table)
    print(
        f"red team: {len(graded)} submissions in {red_team.run.wall_seconds:.0f} s "
        f"({sum(r.seconds for r in graded) / len(graded):.1f} s each on average)"
    )
    rows = read_columns(table)
    assert [row["student"] for row in rows] == [*(cheat.student for cheat in CHEATS), *HONEST]
    assert all(row["contained"] in ("yes", "unchanged") for row in rows), table


def test_report_shows_flags_and_failures(red_team):
    # The tables' rows, not the page's text: a rule or a status named anywhere else on the
    # page (another student's row, a message) would pass a search of the text.
    # The page is 00-recipe's: cheats handed in for another notebook are not on it.
    (page,) = write_report(red_team.root, ["00-recipe"], red_team.root / "report")
    tables = Page(page.read_text()).rows
    flagged = {(row[0], row[3]) for row in tables.get("Flagged submissions", [])}
    failed = {row[0]: row[1] for row in tables.get("Grading failures", [])}
    on_page = {cheat.student for cheat in CHEATS if cheat.assignment == "00-recipe"}
    for row in (row for row in red_team.cheats if row.student in on_page):
        for rule in row.expected_flags:
            assert (row.student, rule) in flagged, (row.student, rule)
        if row.status not in NOT_FAILURES:
            assert failed.get(row.student) == row.status, row.student
    assert {"cheat-kernel-exit", "cheat-infinite-loop"} <= set(failed)
    details = [row[4] for row in tables["Flagged submissions"] if row[3] == "runtime-hook"]
    assert any("changed IPython's input transformers" in detail for detail in details), details


def test_verdict_catches_an_uncontained_cheat(red_team):
    # Plant a failure: pretend the scan missed the checks being patched.
    row = next(r for r in red_team.cheats if r.student == "cheat-torch-inside-engine")
    full = type(row.score)(row.score.max_score, row.score.max_score)
    unflagged = type(row)(**{**row.__dict__, "flags": [], "score": full, "zeroed": full})
    assert "not flagged" in unflagged.verdict and "unflagged" in unflagged.verdict


def test_autograde_command_scans_after_grading(red_team, capsys):
    # One student regraded (the failed ones would be regraded too, taking minutes), then
    # every submission scanned.
    from autograder.grading.cli import main
    from autograder.grading.pipeline.integrity import read_flags

    (red_team.root / "integrity.json").unlink()
    command = ["autograde", "00-recipe", "--root", str(red_team.root), "--student", "reference"]
    assert main(command) == 0
    out = capsys.readouterr().out
    assert "zeroing is off" in out
    assert "cheat-patch-checks: scalar, line" in out and "monkeypatch" in out
    flags = read_flags(red_team.root / "integrity.json")
    flagged = {flag.student for flag in flags if not flag.rule.startswith("runtime-")}
    assert flagged == {  # the scan of 00-recipe: cheats handed in for another notebook aside
        row.student
        for row in red_team.cheats
        if any(
            not flag.rule.startswith("runtime-") and flag.assignment == "00-recipe"
            for flag in row.flags
        )
    }
