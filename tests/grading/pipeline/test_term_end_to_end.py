"""A small term on the real pipeline: three assignments with due dates in term.toml, twelve
students handing in at planted times, the late policy through nbgrader's late-penalty step,
extensions before and after grading, a changed due date, and the Canvas and Moodle exports
read back and compared with the policy applied by hand."""

import csv
import json
from datetime import UTC, datetime, timedelta

import pytest
from nbgrader.api import Gradebook
from tiny_course import hand_in, tiny_course

from autograder.grading.cli import main
from autograder.grading.course.term import LatePolicy
from autograder.grading.pipeline.autograde import read_log_json

pytestmark = pytest.mark.slow

T1, T2, T3 = "t1", "t2", "t3"
POINTS = 10
DUE = {T1: datetime(2026, 11, 2, 18, tzinfo=UTC), T2: datetime(2026, 11, 9, 18, tzinfo=UTC)}
DUE[T3] = datetime(2026, 11, 16, 18, tzinfo=UTC)
POLICY = LatePolicy("percent", percent=10, per="hour", cap=50, grace_minutes=15)
RIGHT, WRONG = "answer = 42", "answer = 41"
# t1's twelve hand-ins: (answer, made this long after the due date; None: no timestamp.txt,
# a string: timestamp.txt as written)
LATE = timedelta(minutes=1)
HAND_INS = {
    "s01": (RIGHT, -timedelta(hours=1)),  # on time
    "s02": (RIGHT, timedelta(minutes=10)),  # within the grace
    "s03": (RIGHT, timedelta(hours=2, minutes=30)),  # 3 started hours: 30%
    "s04": (RIGHT, timedelta(days=2)),  # 48 hours: the 50% cap
    "s05": (RIGHT, timedelta(hours=5)),  # an extension of 6 hours: on time
    "s06": (RIGHT, timedelta(hours=1)),  # exactly 1 hour: 10%
    "s07": (WRONG, timedelta(hours=3)),  # late and 0: nothing to take
    "s08": (RIGHT, None),  # no timestamp: on time, said in the log
    "s09": (RIGHT, "half past six"),  # unreadable: on time, said in the log
    "s10": (RIGHT, "2999-01-01 00:00:00.000000 UTC"),  # in the future: kept, so late
    "s11": (RIGHT, -timedelta(days=2)),  # on time
    "s12": (RIGHT, timedelta(minutes=20)),  # past the grace: 1 started hour
}
STAMP = "%Y-%m-%d %H:%M:%S.%f UTC"
ROSTER_HEADER = "student,name,lms_id,sis_user_id,sis_login_id,section,email\n"


def write_term(root, due: dict[str, datetime], policy: str) -> None:
    lines = "".join(f'"{a}" = {d.isoformat().replace("+00:00", "Z")}\n' for a, d in due.items())
    (root / "term.toml").write_text(f"[due]\n{lines}[late_policy]\n{policy}")


POLICY_TOML = 'kind = "percent"\npercent = 10\nper = "hour"\ncap = 50\ngrace_minutes = 15\n'


def stamp(folder, when) -> None:
    if when is None:
        return
    text = when if isinstance(when, str) else when.strftime(STAMP)
    (folder / "timestamp.txt").write_text(text)


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    """The course graded once: t1 by all twelve (s05 with an extension granted before),
    t2 and t3 by three."""
    root = tiny_course(tmp_path_factory.mktemp("term"), (T1, T2, T3), points=POINTS)
    write_term(root, DUE, POLICY_TOML)
    for student, (answer, after) in HAND_INS.items():
        folder = hand_in(root, student, answer, T1)
        stamp(folder, DUE[T1] + after if isinstance(after, timedelta) else after)
    for assignment in (T2, T3):
        for student in ("s01", "s02", "s03"):
            stamp(hand_in(root, student, RIGHT, assignment), DUE[assignment] - timedelta(hours=1))
    assert main(["extension", T1, "s05", "--hours", "6", "--root", str(root)]) == 0
    for assignment in (T1, T2, T3):
        assert main(["autograde", assignment, "--root", str(root), "--workers", "2"]) == 0
    return root


def penalties(root, assignment) -> dict[str, float]:
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        return {
            s.student_id: s.late_submission_penalty or 0.0
            for s in gradebook.assignment_submissions(assignment)
            if s.timestamp is not None or s.student_id in HAND_INS
        }


def by_hand(student: str, extension_hours: float = 0.0) -> float:
    """The penalty of a t1 hand-in, the policy applied by hand."""
    answer, after = HAND_INS[student]
    score = POINTS if answer == RIGHT else 0
    if after is None or after == "half past six":
        return 0.0
    made = datetime(2999, 1, 1, tzinfo=UTC) if isinstance(after, str) else DUE[T1] + after
    late = (made - DUE[T1] - timedelta(hours=extension_hours)).total_seconds()
    return POLICY.penalty(score, max(late, 0.0))


def test_every_penalty_is_the_policy_applied_by_hand(term):
    found = penalties(term, T1)
    expected = {s: by_hand(s, 6.0 if s == "s05" else 0.0) for s in HAND_INS}
    assert found == expected
    assert (found["s02"], found["s03"], found["s04"], found["s06"], found["s12"]) == (
        0.0, 3.0, 5.0, 1.0, 1.0,
    )  # fmt: skip


def test_unreadable_missing_and_future_timestamps_are_said_in_the_log(term):
    notes = {r["student"]: r["message"] for r in read_log_json(term) if r["assignment"] == T1}
    assert notes["s08"] == "no timestamp.txt: graded as on time"
    assert "'half past six' cannot be read: graded as on time" in notes["s09"]
    assert "is in the future: kept as written" in notes["s10"]
    assert notes["s01"] == ""


def test_an_extension_granted_after_grading_is_applied_by_the_next_autograde(term, capsys):
    assert main(["extension", T1, "s03", "--hours", "3", "--root", str(term)]) == 0
    assert "s03 has until 2026-11-02 21:00 UTC for t1 (3 h past its due date)" in (
        capsys.readouterr().out
    )
    assert main(["autograde", T1, "--root", str(term), "--workers", "2"]) == 0
    assert "1 graded, 11 skipped" in capsys.readouterr().out  # only s03's lateness changed
    assert penalties(term, T1)["s03"] == 0.0
    assert main(["extension", T1, "s03", "--hours", "0", "--root", str(term)]) == 0
    assert main(["autograde", T1, "--root", str(term), "--workers", "2"]) == 0
    assert penalties(term, T1)["s03"] == 3.0


def test_a_changed_due_date_recomputes_every_penalty_and_back(term, capsys):
    """nbgrader #723: a penalty must follow the due date it was computed from."""
    earlier = dict(DUE, **{T2: DUE[T2] - timedelta(hours=2)})  # the hand-ins now 1 h late
    write_term(term, earlier, POLICY_TOML)
    try:
        assert main(["autograde", T2, "--root", str(term), "--workers", "2"]) == 0
        assert "3 graded" in capsys.readouterr().out
        assert penalties(term, T2) == {"s01": 1.0, "s02": 1.0, "s03": 1.0}
    finally:
        write_term(term, DUE, POLICY_TOML)
    assert main(["autograde", T2, "--root", str(term), "--workers", "2"]) == 0
    assert penalties(term, T2) == {"s01": 0.0, "s02": 0.0, "s03": 0.0}


def roster(root, rows) -> str:
    path = root / "roster.csv"
    path.write_text(ROSTER_HEADER + "".join(rows))
    return str(path)


def full_roster(root) -> str:
    return roster(
        root,
        [
            f'{s},"Doe, {s.upper()}",{100 + n},SIS{n},{s}@uni.example,Sec {n % 2},{s}@uni.example\n'
            for n, s in enumerate(sorted(HAND_INS))
        ],
    )


def expected_scores() -> dict[str, dict[str, float]]:
    """Each student's score per assignment after the late penalty, by hand."""
    scores = {}
    for student in HAND_INS:
        answer, _ = HAND_INS[student]
        t1 = (POINTS if answer == RIGHT else 0) - by_hand(student, 6.0 if student == "s05" else 0.0)
        others = POINTS if student in ("s01", "s02", "s03") else 0.0
        scores[student] = {T1: t1, T2: others, T3: others}
    return scores


def test_the_canvas_export_reads_back_cell_for_cell(term, tmp_path, capsys):
    target = tmp_path / "canvas.csv"
    code = main(
        ["export", "--root", str(term), "--format", "canvas", "--roster", full_roster(term),
         "--to", str(target)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", T1, T2, T3]
    expected = expected_scores()
    for n, student in enumerate(sorted(HAND_INS)):
        row = rows[n]
        assert (row["Student"], row["ID"], row["Section"]) == (
            f"Doe, {student.upper()}",
            str(100 + n),
            f"Sec {n % 2}",
        )
        assert {a: float(row[a]) for a in (T1, T2, T3)} == expected[student], student


def test_the_moodle_export_reads_back_cell_for_cell(term, tmp_path, capsys):
    target = tmp_path / "moodle.csv"
    code = main(
        ["export", "--root", str(term), "--format", "moodle", "--roster", full_roster(term),
         "--to", str(target)]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    with target.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert list(rows[0]) == ["Email address", T1, T2, T3]
    expected = expected_scores()
    found = {row["Email address"].split("@")[0]: row for row in rows}
    assert sorted(found) == sorted(HAND_INS)
    for student, row in found.items():
        assert {a: float(row[a]) for a in (T1, T2, T3)} == expected[student], student


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (["s01,A,1,,,,a@x\n", "s01,B,2,,,,b@x\n"], "student given twice: ['s01']"),
        (["s01,A,1,,,,a@x\n"], "students missing from the roster"),
    ],
    ids=["duplicate", "missing"],
)
def test_a_bad_roster_is_one_line_exit_2_and_nothing_written(term, tmp_path, capsys, rows, message):
    target = tmp_path / "canvas.csv"
    path = roster(tmp_path, rows)
    code = main(["export", "--root", str(term), "--format", "canvas", "--roster", path,
                 "--to", str(target)])  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert (code, len(err)) == (2, 1) and message in err[0]
    assert not target.exists()


def test_an_extension_for_an_unknown_student_is_exit_2_and_changes_nothing(term, capsys):
    before = penalties(term, T1)
    assert main(["extension", T1, "nobody", "--hours", "5", "--root", str(term)]) == 2
    assert "unknown student 'nobody'" in capsys.readouterr().err
    assert penalties(term, T1) == before


def test_a_negative_percentage_stops_autograde_before_anything_runs(term, capsys):
    kept = (term / "term.toml").read_text()
    (term / "term.toml").write_text(kept.replace("percent = 10", "percent = -10"))
    try:
        assert main(["autograde", T1, "--root", str(term), "--force"]) == 2
        assert "percent must be a number >= 0, not -10" in capsys.readouterr().err
    finally:
        (term / "term.toml").write_text(kept)


def test_the_log_records_what_lateness_was_judged_by(term):
    records = [r for r in read_log_json(term) if r["assignment"] == T1 and r["student"] == "s11"]
    inputs = records[-1]["late_inputs"]
    assert inputs.startswith("due 2026-11-02T18:00:00; extension None; ")
    assert json.loads(inputs.split("; ", 2)[2])["kind"] == "percent"


def test_the_feedback_page_shows_the_late_penalty(term, capsys):
    assert main(["feedback", T1, "--root", str(term), "--student=s04"]) == 0
    page = (term / "feedback" / "s04" / T1 / f"{T1}.html").read_text()
    assert "Late submission penalty (Score: -5.0)" in page


def test_the_report_shows_the_term_per_submission(term, tmp_path):
    assert main(["report", T1, "--root", str(term), "--out", str(tmp_path)]) == 0
    page = (tmp_path / T1 / "report.html").read_text()
    # s02 (grace), s03, s04, s06, s07, s10, s12 late; s05 extended and on time
    assert "5 on time, 7 late, 1 with an extension; late penalties 15 points in all" in page
    assert "48.0 h late, -5" in page and "extension 6 h" in page


@pytest.mark.parametrize(
    ("hours", "message"),
    [("nan", "must end after the due date"), ("-2", "must end after the due date"),
     ("100000", "longer than a year")],
)  # fmt: skip
def test_an_impossible_extension_is_exit_2_and_changes_nothing(term, capsys, hours, message):
    before = penalties(term, T1)
    assert main(["extension", T1, "s01", "--hours", hours, "--root", str(term)]) == 2
    assert message in capsys.readouterr().err
    assert penalties(term, T1) == before
