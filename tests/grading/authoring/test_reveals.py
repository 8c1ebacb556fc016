"""Is the reveal map computed from the releases, and is the table in docs/instructors.md
the one the command prints today?"""

import json
import shutil

from autograder.grading.authoring.i18n.edition import Edition, editions
from autograder.grading.authoring.kit_leaks import notebook_secrets
from autograder.grading.authoring.reveals import answer_lines_of, markdown_table, reveal_map
from autograder.grading.cli import main
from autograder.grading.course.repo_paths import (
    COURSE_DIR,
    REPO_ROOT,
    SOLUTIONS_DIR,
    notebook_path,
)

DOCS = REPO_ROOT / "docs" / "instructors.md"
SIX = notebook_path(SOLUTIONS_DIR, "06-alternatives")
START, END = "<!-- reveals: autograd-course reveals -->", "<!-- /reveals -->"


def documented_table(text: str) -> str:
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def test_each_release_shows_the_solved_engine_of_the_ones_before_it_and_none_after():
    english = reveal_map(editions()[0])
    ids = english.assignments
    assert english.revealed_by("00-recipe") == []
    assert "02-how-it-works" in english.revealed_by("03-gradient-controls")
    for each in english.reveals:
        assert ids.index(each.answers_of) < ids.index(each.release), each
        assert 0 < each.shown <= each.total or each.tests_shown


def planted(tmp_path, release: str, line: str) -> Edition:
    """The English edition with ``line`` added to ``release``'s notebook, in a copy."""
    course = tmp_path / "course"
    shutil.copytree(COURSE_DIR, course)
    path = notebook_path(course, release)
    notebook = json.loads(path.read_text())
    cell = {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None}
    notebook["cells"].append({**cell, "source": [line + "\n"]})
    path.write_text(json.dumps(notebook))
    return Edition("en", SOLUTIONS_DIR, course, None)


def test_a_line_of_07s_solution_planted_in_09s_release_shows_as_09_reveals_07(tmp_path):
    assert "07-faq" not in reveal_map(editions()[0]).revealed_by("09-mixed-precision")
    line = sorted(answer_lines_of(editions()[0])["07-faq"][0])[0]
    found = reveal_map(planted(tmp_path, "09-mixed-precision", line))
    shown = [r for r in found.reveals if r.release == "09-mixed-precision"]
    assert [(r.answers_of, r.shown, r.tests_shown) for r in shown if r.answers_of == "07-faq"] == [
        ("07-faq", 1, 0)
    ]


def test_a_hidden_test_line_planted_in_a_later_release_reveals_its_assignment(tmp_path):
    line = sorted(answer_lines_of(editions()[0])["06-alternatives"][1])[0]
    hidden = {line for line, origin in notebook_secrets(SIX, "") if origin.endswith("test")}
    assert line in hidden  # a line of 06's hidden tests
    found = reveal_map(planted(tmp_path, "09-mixed-precision", line))
    shown = [(r.shown, r.tests_shown) for r in found.reveals if r.answers_of == "06-alternatives"]
    assert shown == [(0, 1)]


def test_the_table_in_docs_instructors_is_the_one_the_command_prints(capsys):
    assert main(["reveals"]) == 0
    printed = capsys.readouterr().out.strip()
    assert printed == markdown_table([reveal_map(each) for each in editions()])
    assert documented_table(DOCS.read_text()) == printed, (
        "docs/instructors.md's reveal table is stale: paste `autograd-course reveals` between "
        f"{START} and {END}"
    )


def test_a_stale_documented_table_is_told_apart(capsys):
    assert main(["reveals"]) == 0
    printed = capsys.readouterr().out.strip()
    stale = DOCS.read_text().replace("02 100%", "02 99%", 1)
    assert documented_table(stale) != printed


def test_the_json_gives_every_release_with_the_counts_behind_each_share(capsys):
    assert main(["reveals", "--edition", "es", "--json"]) == 0
    (spanish,) = json.loads(capsys.readouterr().out)
    assert spanish["edition"] == "es" and spanish["reveals"]["00-recipe"] == {}
    row = spanish["reveals"]["03-gradient-controls"]["02-how-it-works"]
    assert row["share"] == round(row["shown"] / row["total"], 3) and row["shown"] > 0
