"""Is term.toml read as the one place of due dates, and is every bad value one clear line?"""

from datetime import UTC, datetime, timedelta

import pytest

from autograder.grading.course.term import Term, TermError, read_term

KNOWN = ["00-recipe", "01-worked-example"]


def term_of(tmp_path, text: str) -> Term:
    path = tmp_path / "term.toml"
    path.write_text(text)
    return read_term(path, KNOWN)


def test_a_missing_term_file_is_a_term_without_due_dates(tmp_path):
    term = read_term(tmp_path / "term.toml", KNOWN)
    assert term == Term() and term.is_open("00-recipe", datetime.now(UTC))


def test_an_assignment_closes_after_its_due_date_the_late_window_and_its_longest_extension(
    tmp_path,
):
    term = term_of(
        tmp_path,
        'time_zone = "Europe/Madrid"\nlate_window_hours = 24\n'
        '[due]\n"00-recipe" = 2027-02-01T18:00:00\n'
        '"01-worked-example" = 2027-02-08T18:00:00Z\n'
        '[extensions."00-recipe"]\nalice = 48\nbob = 12\n',
    )
    closes = datetime(2027, 2, 1, 17, tzinfo=UTC) + timedelta(hours=24 + 48)  # CET is UTC+1
    assert term.closes_at("00-recipe") == closes
    assert term.is_open("00-recipe", closes - timedelta(seconds=1))
    assert not term.is_open("00-recipe", closes)
    assert term.closes_at("01-worked-example") == datetime(2027, 2, 9, 18, tzinfo=UTC)
    why = term.why_open("00-recipe")
    assert "open until 2027-02-04 18:00 CET" in why and "48 h extension" in why


def test_an_assignment_closed_by_hand_is_closed_whatever_its_dates(tmp_path):
    term = term_of(
        tmp_path,
        '[due]\n"00-recipe" = 2099-01-01T00:00:00Z\n[closed]\n"00-recipe" = "all handed in"\n',
    )
    assert not term.is_open("00-recipe", datetime.now(UTC))
    assert term.closed == {"00-recipe": "all handed in"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[due]\n"00-recipe" = 2027-02-01T18:00:00\n', "has no time zone"),
        ('time_zone = "Mars/Olympus"\n', "unknown time_zone 'Mars/Olympus'"),
        ("late_window_hours = -1\n", "late_window_hours must be a number of hours >= 0"),
        ('[due]\n"99-nope" = 2027-02-01T18:00:00Z\n', "[due] names unknown assignment(s)"),
        ('[due]\n"00-recipe" = "next monday"\n', "is not a date and time"),
        ('[extensions."00-recipe"]\nalice = 0\n', "extension of alice on 00-recipe"),
        ('[closed]\n"00-recipe" = " "\n', "[closed] 00-recipe needs a reason"),
        ("due_dates = 1\n", "unknown key(s) ['due_dates']"),
        ("[due\n", "not TOML"),
    ],
)
def test_a_bad_term_file_is_one_line_naming_the_problem(tmp_path, text, message):
    with pytest.raises(TermError) as raised:
        term_of(tmp_path, text)
    assert message in str(raised.value) and "\n" not in str(raised.value)
