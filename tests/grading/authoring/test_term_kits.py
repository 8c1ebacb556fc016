"""Does the kit follow the term? At any point, no release in it shows the answers of an
assignment still open, checked by unpacking the kit and searching it for their lines."""

from datetime import UTC, datetime, timedelta

import pytest
from tiny_course import extensions_gradebook

from autograder.grading.authoring.kit_leaks import answer_lines, find_leaks
from autograder.grading.cli import main
from autograder.grading.course.repo_paths import assignments
from autograder.grading.course.term import read_term

IDS = assignments()
START = datetime(2027, 2, 1, 18, tzinfo=UTC)  # 00's due date; one assignment due a week


def week(number: int) -> datetime:
    """The middle of the week after assignment ``number - 1`` was due."""
    return START + timedelta(weeks=number - 1, days=3)


def weekly_term(tmp_path, extra: str = "", late_hours: int = 24):
    due = "\n".join(
        f'"{a}" = {(START + timedelta(weeks=n)).isoformat().replace("+00:00", "Z")}'
        for n, a in enumerate(IDS)
    )
    path = tmp_path / "term.toml"
    path.write_text(f"late_window_hours = {late_hours}\n[due]\n{due}\n{extra}")
    return path


def kit(capsys, tmp_path, *args):
    out = tmp_path / "kit"
    code = main(["student-kit", "--out", str(out), *args])
    captured = capsys.readouterr()
    folders = sorted(p.name for p in out.iterdir() if p.is_dir()) if out.exists() else []
    return code, folders, captured.out.strip().splitlines(), captured.err.strip().splitlines()


@pytest.fixture(scope="module")
def secrets():
    return answer_lines()


def still_open(term_file, at) -> frozenset[int]:
    term = read_term(term_file)
    return frozenset(n for n, a in enumerate(IDS) if term.is_open(a, at))


@pytest.mark.parametrize("number", [1, 2, 5, 6])
def test_a_kit_between_two_due_dates_holds_no_open_assignments_answer(
    capsys, tmp_path, secrets, number
):
    term = weekly_term(tmp_path)
    at = week(number)
    code, folders, out, _ = kit(capsys, tmp_path, "--term", str(term), "--at", at.isoformat())
    assert code == 0
    assert folders[: number + 1] == IDS[: number + 1]  # every closed one and the current one
    opened = still_open(term, at)
    assert opened == frozenset(range(number, len(IDS)))
    assert find_leaks(tmp_path / "kit", secrets, opened) == []
    (held,) = [line.split(" is held back: ")[0] for line in out if " is held back: " in line]
    assert held not in folders and IDS.index(held) == len(folders)


def test_the_same_search_finds_an_open_assignments_answers_in_a_self_study_kit(
    capsys, tmp_path, secrets
):
    term = weekly_term(tmp_path)
    code, folders, out, _ = kit(capsys, tmp_path, "--self-study")
    assert (code, folders) == (0, IDS)
    assert out[-1].startswith("THIS KIT HOLDS ANSWERS")
    leaks = find_leaks(tmp_path / "kit", secrets, still_open(term, week(2)))
    assert {leak.where.split("/")[0] for leak in leaks} >= {"03-gradient-controls"}


def test_through_past_an_open_assignment_is_exit_2_one_line_and_nothing_written(capsys, tmp_path):
    term = weekly_term(tmp_path)
    at = week(2).isoformat()
    code, folders, _, err = kit(
        capsys, tmp_path, "--term", str(term), "--at", at, "--through", "04-custom-functions"
    )
    assert (code, len(err)) == (2, 1) and not (tmp_path / "kit").exists()
    assert "03-gradient-controls shows answers of 02-how-it-works" in err[0]
    assert "open until 2027-02-16 18:00 UTC (due 2027-02-15 18:00 UTC + 24 h late window)" in err[0]


def test_without_due_dates_the_kit_holds_the_first_assignment_and_says_how_to_get_more(
    capsys, tmp_path
):
    code, folders, out, _ = kit(capsys, tmp_path, "--term", str(tmp_path / "none.toml"))
    assert (code, folders) == (0, [IDS[0]])
    assert out[-1].startswith(f"term.toml gives no due dates: the kit holds {IDS[0]} only")
    assert "--through ASSIGNMENT" in out[-1]


def test_without_due_dates_through_takes_the_earlier_ones_as_closed_and_says_so(capsys, tmp_path):
    code, folders, out, _ = kit(
        capsys, tmp_path, "--term", str(tmp_path / "none.toml"), "--through", IDS[2]
    )
    assert (code, folders) == (0, IDS[:3])
    assert out[-2:] == [
        f"{IDS[0]} has no due date: taken as closed by --through {IDS[2]}",
        f"{IDS[1]} has no due date: taken as closed by --through {IDS[2]}",
    ]


def test_an_extension_holds_the_next_release_back_until_the_extended_deadline(capsys, tmp_path):
    term = weekly_term(tmp_path)
    extensions_gradebook(tmp_path, IDS[1], {"alice": 72, "bob": 24})  # the course's gradebook
    before = START + timedelta(weeks=1, hours=24 + 71)  # 01 due + late window + 71 h
    code, folders, out, _ = kit(capsys, tmp_path, "--term", str(term), "--at", before.isoformat())
    assert (code, folders) == (0, IDS[:2])
    assert f"{IDS[2]} is held back" in out[-1] and "72 h extension" in out[-1]
    after = before + timedelta(hours=1)
    later = tmp_path / "later"
    code, folders, _, _ = kit(capsys, later, "--term", str(term), "--at", after.isoformat())
    assert (code, folders) == (0, IDS[:3])


def test_an_assignment_closed_by_hand_lets_the_next_release_out_and_its_reason_is_said(
    capsys, tmp_path
):
    term = weekly_term(tmp_path, f'[closed]\n"{IDS[1]}" = "every hand-in collected early"\n')
    code, folders, out, _ = kit(capsys, tmp_path, "--term", str(term), "--at", week(1).isoformat())
    assert (code, folders) == (0, IDS[:3])
    assert f"{IDS[1]} closed by hand: every hand-in collected early" in out


def test_self_study_with_through_is_refused(capsys, tmp_path):
    code, _, _, err = kit(capsys, tmp_path, "--self-study", "--through", IDS[1])
    assert (code, len(err)) == (2, 1) and "--self-study holds every notebook" in err[0]


def test_a_date_without_a_time_zone_is_refused_by_the_command(capsys, tmp_path):
    with pytest.raises(SystemExit) as raised:
        main(["student-kit", "--out", str(tmp_path / "kit"), "--at", "2027-02-10T12:00"])
    assert raised.value.code == 2 and "has no time zone" in capsys.readouterr().err
