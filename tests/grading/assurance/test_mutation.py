"""Mutation testing of the graders: each operator's rewrites, the mutants of a cell, the
report's counts, and one fixed mutant of every notebook graded by the real nbgrader (each
run grading its reference too), which a second run reads back from the cache."""

import json

import pytest

from autograder.grading.assurance.mutation import grading as mutation_grading
from autograder.grading.assurance.mutation.by_hand import (
    HAND_MUTANTS,
    HandMutant,
    hand_mutants,
    rewrite,
)
from autograder.grading.assurance.mutation.equivalents import read_equivalents
from autograder.grading.assurance.mutation.grading import GradingOptions, Outcome
from autograder.grading.assurance.mutation.mutants import (
    Mutant,
    assignment_mutants,
    cell_mutants,
    compiles,
    sample,
    solution_cells,
)
from autograder.grading.assurance.mutation.operators import OPERATOR_NAMES, apply, rewrites
from autograder.grading.assurance.mutation.report import (
    TABLE_BEGIN,
    TABLE_END,
    MutationReport,
    classify,
    markdown_table,
    rewrite_readme,
)
from autograder.grading.assurance.mutation.run import (
    MutateSettings,
    UnknownMutantError,
    chosen_mutants,
    run_mutation,
    stale_equivalents,
)
from autograder.grading.authoring.engine_sync import strip_solution_markers
from autograder.grading.course.repo_paths import SOLUTIONS_DIR, assignments


def mutated(code: str, operator: str) -> set[str]:
    """Every rewrite of ``code`` by one operator, applied."""
    return {apply(code, r) for r in rewrites(code, lambda node: True) if r.operator == operator}


OPERATOR_CASES = {
    "arithmetic": (
        "y = a + b * c\ng -= d\n",
        {"y = (a - b * c)\ng -= d\n", "y = a + (b / c)\ng -= d\n", "y = a + b * c\ng += d\n"},
    ),
    "comparison": ("ok = x < 1\n", {"ok = (x <= 1)\n", "ok = (x > 1)\n"}),
    "constant": (
        "n = f(2, 0.5, flag=True)\n",
        {
            "n = f(1, 0.5, flag=True)\n",
            "n = f(3, 0.5, flag=True)\n",
            "n = f(2, 0.0, flag=True)\n",
            "n = f(2, 1.5, flag=True)\n",
            "n = f(2, 0.5, flag=False)\n",
        },
    ),
    "term-dropped": (
        "y = a - b\nok = p and q\n",
        {
            "y = a\nok = p and q\n",
            "y = b\nok = p and q\n",
            "y = a - b\nok = p\n",
            "y = a - b\nok = q\n",
        },
    ),
    "argument-dropped": ("f(a, k=1)\n", {"f(k=1)\n", "f(a)\n"}),
    "axis": (
        "s = x.sum(axis=0, keepdims=True)\n",
        {"s = x.sum(axis=-1, keepdims=True)\n", "s = x.sum(axis=0, keepdims=False)\n"},
    ),
    "augmented-assignment": ("g += d\n", {"g = d\n"}),
    "statement-deleted": (
        "a = 1\nb = 2  # why\n",
        {"pass\nb = 2  # why\n", "a = 1\npass  # why\n"},
    ),
    "lines-swapped": (
        "a = f(x)\nb = a + 1\nc = 2\n",
        {"b = a + 1\na = f(x)\nc = 2\n"},  # c = 2 shares nothing with b: not swapped
    ),
    "return-negated": (
        "def f(x):\n    return x @ w\n\ndef g():\n    return 1, 2\n",
        {
            "def f(x):\n    return -(x @ w)\n\ndef g():\n    return 1, 2\n",
            "def f(x):\n    return (x @ w).T\n\ndef g():\n    return 1, 2\n",
        },
    ),
}


def test_every_operator_has_a_case():
    assert set(OPERATOR_CASES) == set(OPERATOR_NAMES)


@pytest.mark.parametrize("operator", OPERATOR_NAMES)
def test_operator_rewrites(operator):
    code, expected = OPERATOR_CASES[operator]
    assert mutated(code, operator) == expected


def test_parenthesised_operand_keeps_its_parentheses():
    assert mutated("y = 2 * (a + b)\n", "arithmetic") == {
        "y = (2 / (a + b))\n",  # the whole product: parenthesised, its operand kept as written
        "y = 2 * (a - b)\n",  # inside the parentheses already there: none added
    }


MARKED = '''def f(x):
    """Twice x, plus one."""
    y = 2 * x
    ### BEGIN SOLUTION
    z = y + 1
    ### END SOLUTION
    return z
'''


def test_only_solution_regions_are_mutated():
    mutants = cell_mutants("00-x", "f", MARKED)
    assert mutants, "the solution line has mutants"
    for mutant in mutants:
        assert "### BEGIN SOLUTION" not in mutant.source
        assert "y = 2 * x" in mutant.source and "return z" in mutant.source
        assert mutant.line == 4  # the solution line, counted without the markers
        assert mutant.diff.count("\n-") == 1
    assert {m.source.splitlines()[3] for m in mutants} >= {"    z = (y - 1)", "    pass"}
    assert len({m.id for m in mutants}) == len(mutants)


def _mutants(count: int) -> list[Mutant]:
    return [Mutant("00-x", f"cell{i % 3}", "constant", "", 1, f"x = {i}", "") for i in range(count)]


def test_sample_is_seeded_and_spread_over_exercises():
    mutants = _mutants(30)
    chosen = sample(mutants, 6, seed=1)
    assert chosen == sample(mutants, 6, seed=1)
    assert chosen != sample(mutants, 6, seed=2)
    assert sorted(m.cell for m in chosen) == ["cell0", "cell0", "cell1", "cell1", "cell2", "cell2"]
    assert sample(mutants, 50) == mutants


def test_equivalent_list_needs_a_reason(tmp_path):
    listing = tmp_path / "equivalent.txt"
    listing.write_text("# comment\nabc123 float rounding cannot differ\n")
    assert read_equivalents(listing) == {"abc123": "float rounding cannot differ"}
    listing.write_text("abc123\n")
    with pytest.raises(ValueError, match="needs a one-line reason"):
        read_equivalents(listing)


def test_counts_and_score():
    mutants = _mutants(5)
    outcomes = {
        mutants[0].id: Outcome("graded", 3, 5, ("test_a",), 1.0),
        mutants[1].id: Outcome("timeout", 0, 5, ("test_a",), 1.0),
        mutants[2].id: Outcome("graded", 5, 5, (), 1.0),
        mutants[3].id: Outcome("graded", 5, 5, (), 1.0),
        mutants[4].id: Outcome("graded", 0, 5, ("test_a",), 1.0),
    }
    equivalents = {mutants[3].id: "cannot differ", mutants[4].id: "wrongly listed"}
    rows, wrong = classify(mutants, outcomes, equivalents)
    assert [r.verdict for r in rows] == ["killed", "crashed", "survived", "equivalent", "killed"]
    assert wrong == [mutants[4].id]
    report = MutationReport(rows, {("00-x", f"cell{i}"): 10 for i in range(3)}, wrong)
    overall = report.overall()
    assert (overall.generated, overall.graded, overall.killed, overall.crashed) == (30, 5, 3, 1)
    assert (overall.survived, overall.equivalent) == (1, 1)
    assert overall.score == pytest.approx(3 / 4)
    assert "| 00-x | 30 | 5 | 3 | 1 | 1 | 1 | 75.0% |" in markdown_table(report)


def test_readme_table_is_rewritten_between_markers(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{TABLE_BEGIN}\nold\n{TABLE_END}\nrest\n")
    assert rewrite_readme(readme, "new table")
    assert readme.read_text() == f"intro\n{TABLE_BEGIN}\nnew table\n{TABLE_END}\nrest\n"
    readme.write_text("no markers\n")
    assert not rewrite_readme(readme, "new table")


def first_negated_return(assignment: str) -> Mutant:
    """The notebook's first mutant that negates a returned value: a plain mistake that every
    exercise's tests must catch, chosen by rule so that editing a solution keeps a choice."""
    return next(
        m
        for m in assignment_mutants(SOLUTIONS_DIR, assignment)
        if m.what == "returned value negated"
    )


@pytest.mark.slow
def test_every_notebook_kills_a_fixed_mutant_then_a_rerun_grades_nothing(tmp_path, monkeypatch):
    """One mutant per notebook graded by the real nbgrader with trusted verdicts (the whole
    run's small sample); each run grades the reference first and stops if it lost points. A
    second run reads every outcome from the cache."""
    chosen = {a: first_negated_return(a) for a in assignments(SOLUTIONS_DIR)}
    settings = MutateSettings(
        out=tmp_path / "mutation",
        readme=None,
        mutants=tuple(m.id for m in chosen.values()),
        options=GradingOptions(workers=2, cell_timeout=60),
    )
    report = run_mutation(settings)  # MutationError when a reference loses a point
    verdicts = {row.mutant.assignment: (row.verdict, row.mutant.diff) for row in report.rows}
    assert set(verdicts) == set(chosen)
    for assignment, (verdict, diff) in verdicts.items():
        assert verdict == "killed", f"{assignment}: {verdict}\n{diff}"
    data = json.loads((settings.out / "report.json").read_text())
    assert {m["id"] for m in data["mutants"]} == set(settings.mutants)
    assert (settings.out / "report.html").read_text().count("<tr>") >= len(chosen)

    def no_grading(*args, **kwargs):
        raise AssertionError("a resumed run graded again")

    monkeypatch.setattr(mutation_grading, "grade_batch", no_grading)
    monkeypatch.setattr(mutation_grading, "generate_release", no_grading)
    again = run_mutation(settings)
    assert [(r.mutant.id, r.outcome) for r in again.rows] == [
        (r.mutant.id, r.outcome) for r in report.rows
    ]


def test_hand_written_mutants_apply_to_the_reference():
    """Each hand-written mutant rewrites its cell's solution region once, into valid Python
    that differs from the reference and from every generated mutant of the cell."""
    assert len({hand.id for hand in HAND_MUTANTS}) == len(HAND_MUTANTS)
    for assignment in sorted({hand.assignment for hand in HAND_MUTANTS}):
        cells = solution_cells(SOLUTIONS_DIR, assignment)
        generated = {m.id for m in assignment_mutants(SOLUTIONS_DIR, assignment)}
        for mutant in hand_mutants(SOLUTIONS_DIR, assignment):
            assert mutant.id.startswith("hand-") and mutant.id not in generated
            assert mutant.operator == "by-hand" and mutant.diff.count("\n+") >= 1
            reference = strip_solution_markers(cells[mutant.cell])
            assert mutant.source != reference and compiles(mutant.source)
            assert "### BEGIN SOLUTION" not in mutant.source
            changed = mutant.diff.split("@@")[1].split()[0]  # "-15,5": first line shown
            assert mutant.line >= int(changed[1:].split(",")[0])


def test_hand_written_rewrite_must_be_once_and_inside_a_solution_region():
    hand = HandMutant("hand-x", "00-x", "f", "adds two", "z = y + 1", "z = y + 2")
    assert "z = y + 2" in rewrite(hand, MARKED)
    outside = HandMutant("hand-y", "00-x", "f", "doubles thrice", "y = 2 * x", "y = 3 * x")
    with pytest.raises(ValueError, match="not inside a solution region"):
        rewrite(outside, MARKED)
    missing = HandMutant("hand-z", "00-x", "f", "absent", "w = 0", "w = 1")
    with pytest.raises(ValueError, match="0 times"):
        rewrite(missing, MARKED)


def test_mutants_chosen_by_id_and_hand_written_ones_always(tmp_path):
    hand = hand_mutants(SOLUTIONS_DIR, "07-faq")
    generated = assignment_mutants(SOLUTIONS_DIR, "07-faq")
    sampled = MutateSettings(assignments=("07-faq",), sample=2, out=tmp_path)
    every, chosen = chosen_mutants(sampled, "07-faq")
    assert every == generated + hand
    assert chosen[-len(hand) :] == hand and len(chosen) == 2 + len(hand)
    picked = MutateSettings(mutants=(hand[0].id, generated[3].id), out=tmp_path)
    assert chosen_mutants(picked, "07-faq")[1] == [generated[3], hand[0]]
    with pytest.raises(UnknownMutantError, match="no-such-mutant"):
        run_mutation(MutateSettings(assignments=("07-faq",), mutants=("no-such-mutant",)))


def test_equivalent_list_names_current_mutants():
    """A mutant's id hashes its whole cell, so editing a cell (even a docstring) renames its
    mutants: the equivalent list must follow, or its entries silently stop counting."""
    assert stale_equivalents(MutateSettings()) == []
