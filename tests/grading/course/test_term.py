"""Is term.toml read as the one place of due dates, and is every bad value one clear line?"""

from datetime import UTC, datetime, timedelta

import pytest

from tiny_course import extensions_gradebook

from autograder.grading.course.term import LatePolicy, Term, TermError, read_term

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
    extensions_gradebook(tmp_path, "00-recipe", {"alice": 48, "bob": 12})
    term = term_of(
        tmp_path,
        'time_zone = "Europe/Madrid"\nlate_window_hours = 24\n'
        '[due]\n"00-recipe" = 2027-02-01T18:00:00\n'
        '"01-worked-example" = 2027-02-08T18:00:00Z\n',
    )
    assert term.extensions == {"00-recipe": {"alice": 48.0, "bob": 12.0}}
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
        ('[extensions."00-recipe"]\nalice = 5\n', "(extensions are nbgrader's: autograd-course"),
        ("[late_policy]\npercent = -10\n", "percent must be a number >= 0, not -10"),
        ('[late_policy]\nkind = "half"\n', "kind must be one of ('none', 'zero', 'percent')"),
        ('[late_policy]\nkind = "percent"\n', 'kind "percent" needs percent > 0'),
        ("[late_policy]\ncap = 150\n", "cap is a percent of the score: at most 100"),
        ('[late_policy]\nper = "week"\n', "per must be one of ('hour', 'day')"),
        ('[closed]\n"00-recipe" = " "\n', "[closed] 00-recipe needs a reason"),
        ("due_dates = 1\n", "unknown key(s) ['due_dates']"),
        ("[due\n", "not TOML"),
    ],
)
def test_a_bad_term_file_is_one_line_naming_the_problem(tmp_path, text, message):
    with pytest.raises(TermError) as raised:
        term_of(tmp_path, text)
    assert message in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("policy", "late", "penalty"),
    [
        (LatePolicy(), 3600 * 50, 0.0),
        (LatePolicy("zero"), 1, 10.0),
        (LatePolicy("zero", grace_minutes=5), 300, 0.0),
        (LatePolicy("percent", 10, "hour", 50, 15), 15 * 60, 0.0),  # the grace's last second
        (LatePolicy("percent", 10, "hour", 50, 15), 15 * 60 + 1, 1.0),  # 1 started hour
        (LatePolicy("percent", 10, "hour", 50, 15), 3600, 1.0),
        (LatePolicy("percent", 10, "hour", 50, 15), 3601, 2.0),
        (LatePolicy("percent", 10, "hour", 50, 15), 3600 * 30, 5.0),  # the cap
        (LatePolicy("percent", 25, "day"), 86400 * 2 + 1, 7.5),  # 3 started days
        (LatePolicy("percent", 25, "day"), 86400 * 9, 10.0),  # never more than the score
    ],
)
def test_each_kind_of_policy_takes_what_it_says(policy, late, penalty):
    assert policy.penalty(10.0, late) == penalty
    assert policy.describe()
