"""autograd-course similarity: planted copies are caught, honest work is not (no kernels).

Submissions are notebook JSON built from solutions/ and course/ as the demo cohort's are,
or from independently written answers (tests/independent_solutions.py, whose graded cells
run in this process to prove them correct); copies are disguised through the syntax tree
(tests/similarity_rewrite.py).
"""

import ast
import json
import shutil
from dataclasses import replace
from itertools import combinations
from pathlib import Path

import nbformat
import numpy as np
import pytest
from independent_solutions import implementations, run_graded_cells, student_notebook
from similarity_rewrite import disguise, inline_helpers

from autograder.grading.assurance.cohort import build_submission, solved_sources
from autograder.grading.cli import main
from autograder.grading.course.course_root import load_course
from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path
from autograder.grading.pipeline.similarity.run import run_similarity
from autograder.grading.pipeline.similarity.settings import Settings

RECIPE = "00-recipe"
WORKED = "01-worked-example"

# Two backward passes written independently of the reference (and of each other): a
# recursive depth-first order, and Kahn's algorithm counting each node's users.
RECURSIVE_BACKWARD = """\
topo = []
seen = set()

def visit(v):
    if id(v) in seen:
        return
    seen.add(id(v))
    for p, _ in v.parents:
        visit(p)
    topo.append(v)

visit(self)
pending = {id(self): 1.0}
for v in topo[::-1]:
    g = pending.get(id(v), 0.0)
    if not v.parents:
        v.grad = g if v.grad is None else v.grad + g
        continue
    for p, local in v.parents:
        pending[id(p)] = pending.get(id(p), 0.0) + local * g
"""
KAHN_BACKWARD = """\
users = {}
nodes = {id(self): self}
todo = [self]
while todo:
    n = todo.pop()
    for p, _ in n.parents:
        users[id(p)] = users.get(id(p), 0) + 1
        if id(p) not in nodes:
            nodes[id(p)] = p
            todo.append(p)
acc = dict.fromkeys(nodes, 0.0)
acc[id(self)] = 1.0
ready = [self]
while ready:
    n = ready.pop()
    if n.is_leaf:
        n.grad = acc[id(n)] + (n.grad or 0.0)
    for p, d in n.parents:
        acc[id(p)] += d * acc[id(n)]
        users[id(p)] -= 1
        if users[id(p)] == 0:
            ready.append(p)
"""
SHORT_ANSWERS = [  # add, mul, pow: a line or two, the same for everyone who solves them
    "return Scalar._from_op(self.data + other.data, [(self, 1.0), (other, 1.0)])",
    "return Scalar._from_op(self.data * other.data, [(self, other.data), (other, self.data)])",
    "d = exponent * self.data ** (exponent - 1)\n"
    "return Scalar._from_op(self.data**exponent, [(self, d)])",
]


def answered(cell: str, answers: list[str]) -> str:
    """A source cell with its solution regions replaced, in order, by ``answers``."""
    out, inside, left = [], False, list(answers)
    for line in cell.splitlines():
        if line.strip() == "### BEGIN SOLUTION":
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + text if text else "" for text in left.pop(0).splitlines()]
        elif line.strip() == "### END SOLUTION":
            inside = False
        elif not inside:
            out.append(line)
    return "\n".join(out)


def recipe_notebook(scalar: str) -> nbformat.NotebookNode:
    """00-recipe as handed in with ``scalar`` as the Scalar cell, no_grad solved."""
    notebook = build_submission("reference", RECIPE, SOLUTIONS_DIR, COURSE_DIR)
    for cell in notebook.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "scalar":
            cell.source = scalar
    return notebook


def honest_scalar(backward: str) -> str:
    """The Scalar cell with the short answers and a backward pass of one's own."""
    source = nbformat.read(notebook_path(SOLUTIONS_DIR, RECIPE), 4)
    cells = {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in source.cells}
    cell = cells["scalar"]
    return answered(cell.source, [*SHORT_ANSWERS, backward])


def course_root(base: Path, assignment: str) -> Path:
    """A course root with the assignment's source and release, and no submission yet."""
    root = base / "course"
    for folder, origin in (("source", SOLUTIONS_DIR), ("release", COURSE_DIR)):
        shutil.copytree(origin / assignment, root / folder / assignment)
    (root / "nbgrader_config.py").write_text("c = get_config()  # noqa: F821\n")
    (root / "submitted").mkdir()
    return root


def hand_in(folder: Path, student: str, assignment: str, notebook) -> Path:
    """Write ``notebook`` (a NotebookNode, or raw bytes) as the student's submission."""
    target = notebook_path(folder / student, assignment)
    target.parent.mkdir(parents=True)
    if isinstance(notebook, bytes):
        target.write_bytes(notebook)
    else:
        nbformat.write(notebook, target)
    return target


@pytest.fixture(scope="module")
def recipe_cohort(tmp_path_factory):
    """00-recipe: two honest students, three disguised copies, an archive, broken inputs."""
    base = tmp_path_factory.mktemp("similarity")
    root = course_root(base, RECIPE)
    submitted, archive = root / "submitted", base / "2025"
    recursive, kahn = honest_scalar(RECURSIVE_BACKWARD), honest_scalar(KAHN_BACKWARD)
    reference = solved_sources(notebook_path(SOLUTIONS_DIR, RECIPE))["scalar"]
    hand_in(submitted, "ana", RECIPE, recipe_notebook(recursive))
    hand_in(submitted, "copies-ana", RECIPE, recipe_notebook(disguise(recursive)))
    hand_in(submitted, "copies-reference", RECIPE, recipe_notebook(disguise(reference)))
    hand_in(archive, "bea", RECIPE, recipe_notebook(kahn))  # last year's honest student
    hand_in(submitted, "copies-2025", RECIPE, recipe_notebook(disguise(kahn, split=False)))
    hand_in(submitted, "blank", RECIPE, nbformat.read(notebook_path(COURSE_DIR, RECIPE), 4))
    hand_in(submitted, "garbled", RECIPE, b"\xff\xfe not a notebook")
    (submitted / "absent" / RECIPE).mkdir(parents=True)
    run = run_similarity(load_course(root), RECIPE, [archive], Settings())
    return root, run


PLANTED = {
    frozenset({"copies-ana", "ana"}),
    frozenset({"copies-reference", "reference"}),
    frozenset({"copies-2025", "2025/bea"}),
}


def test_each_planted_copy_ranks_above_every_honest_pair(recipe_cohort):
    _, run = recipe_cohort
    settings = Settings()
    scores = {frozenset({p.a, p.b}): p for p in run.pairs}
    planted = [scores[pair] for pair in PLANTED]
    honest = [p for key, p in scores.items() if key not in PLANTED]
    assert all(pair.flagged(settings) for pair in planted), planted
    assert not [p for p in honest if p.flagged(settings)]
    assert min(p.score for p in planted) > max((p.score for p in honest), default=0.0)
    kinds = {p.kind for p in planted}
    assert kinds == {"cohort", "reference", "archive"}
    # An honest pair that shares code does exist: the line everyone writes for add/mul/pow.
    assert scores[frozenset({"ana", "reference"})].score < settings.threshold


def test_broken_and_empty_submissions_are_reported_not_compared(recipe_cohort):
    _, run = recipe_cohort
    reasons = {s.author: s.reason for s in run.skipped}
    assert set(reasons) == {"blank", "garbled", "absent"}
    assert "nothing written" in reasons["blank"]
    assert "not UTF-8" in reasons["garbled"]
    assert "no notebook" in reasons["absent"]


def test_pairs_json_names_cells_and_lines(recipe_cohort):
    root, _ = recipe_cohort
    payload = json.loads((root / "similarity" / RECIPE / "pairs.json").read_text())
    top = payload["pairs"][0]
    assert top["flagged"] and "scalar" in top["cells"]
    assert all(r["cell"] in top["cells"] and r["lines"][0] >= 1 for r in top["regions_a"])
    assert {s["student"] for s in payload["skipped"]} == {"blank", "garbled", "absent"}


def test_report_escapes_student_text(tmp_path):
    root = course_root(tmp_path, RECIPE)
    hostile = honest_scalar(RECURSIVE_BACKWARD).replace(
        "topo = []", "topo = []  # </pre><script>alert(1)</script>"
    )
    hand_in(root / "submitted", "<img src=x onerror=alert(2)>", RECIPE, recipe_notebook(hostile))
    hand_in(root / "submitted", "twin", RECIPE, recipe_notebook(hostile))
    run_similarity(load_course(root), RECIPE, [], Settings())
    page = (root / "similarity" / RECIPE / "report.html").read_text()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;" in page and "&lt;img src=x" in page
    assert "<mark>" in page  # the twins' shared code is highlighted


def test_a_disguised_copy_of_reference_code_is_flagged_against_the_reference(tmp_path):
    """01: a planted-bug student's notebook (the reference but one bug), disguised cell by
    cell. Between the two students only the bug is evidence (the rest is the reference's,
    which the text leads honest students to as well), and the pair says so; each of them is
    flagged against the reference itself."""
    root = course_root(tmp_path, WORKED)
    origin = build_submission("bug-preorder-backward", WORKED, SOLUTIONS_DIR, COURSE_DIR)
    hand_in(root / "submitted", "bug-preorder-backward", WORKED, origin)
    copy = nbformat.reads(nbformat.writes(origin), as_version=4)
    for cell in copy.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            cell.source = disguise(cell.source, split=False)
    hand_in(root / "submitted", "copier", WORKED, copy)
    run = run_similarity(load_course(root), WORKED, [], replace(Settings(), floor=0.0))
    pairs = {frozenset({p.a, p.b}): p for p in run.pairs}
    pair = pairs[frozenset({"bug-preorder-backward", "copier"})]
    assert pair.in_reference > 0.9  # what they share is nearly all the reference's
    for student in ("bug-preorder-backward", "copier"):
        against = pairs[frozenset({student, "reference"})]
        assert against.flagged(Settings()) and against.score > Settings().threshold
        assert len({r.cell for r in against.regions_a}) > 5  # many exercises, not one


def test_bad_input_is_one_line_exit_2(tmp_path, capsys):
    root = course_root(tmp_path, RECIPE)
    assert main(["similarity", "99-nothing", "--root", str(root)]) == 2
    assert main(["similarity", RECIPE, "--root", str(root), "--against", str(tmp_path / "x")]) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert len(errors) == 2 and "unknown assignment" in errors[0] and "--against" in errors[1]


def test_command_prints_flagged_pairs(tmp_path, capsys):
    root = course_root(tmp_path, RECIPE)
    notebook = recipe_notebook(honest_scalar(KAHN_BACKWARD))
    hand_in(root / "submitted", "one", RECIPE, notebook)
    hand_in(root / "submitted", "two", RECIPE, notebook)
    assert main(["similarity", RECIPE, "--root", str(root), "--top", "1"]) == 0
    out = capsys.readouterr().out
    assert "one ~ two (cohort)" in out and "1 flagged pairs" in out


def test_a_cohort_of_one_says_it_was_compared_with_the_reference_alone(tmp_path, capsys):
    root = course_root(tmp_path, RECIPE)
    hand_in(root / "submitted", "solo", RECIPE, recipe_notebook(honest_scalar(KAHN_BACKWARD)))
    hand_in(root / "submitted", "garbled", RECIPE, b"\xff\xfe not a notebook")
    assert main(["similarity", RECIPE, "--root", str(root)]) == 0
    out = capsys.readouterr().out
    assert "note: only one submission to compare (solo): it was compared with the reference" in out
    assert "--against" in out and "0 flagged pairs of 1 " in out


def test_two_students_or_an_archive_need_no_such_note(tmp_path, capsys):
    root = course_root(tmp_path, RECIPE)
    notebook = recipe_notebook(honest_scalar(KAHN_BACKWARD))
    hand_in(root / "submitted", "solo", RECIPE, notebook)
    hand_in(tmp_path / "2025" / "submitted", "old", RECIPE, notebook)
    archive = str(tmp_path / "2025" / "submitted")
    assert main(["similarity", RECIPE, "--root", str(root), "--against", archive]) == 0
    hand_in(root / "submitted", "duo", RECIPE, notebook)
    assert main(["similarity", RECIPE, "--root", str(root)]) == 0
    assert "note: only one submission" not in capsys.readouterr().out


def test_the_grading_report_names_each_flagged_students_highest_match(recipe_cohort):
    from autograder.grading.pipeline.report.gather import read_similarity
    from autograder.grading.pipeline.report.html import render_report
    from autograder.grading.pipeline.report.model import AssignmentReport, Submission

    root, _ = recipe_cohort
    graded = [Submission("ana", 1.0, 1.0, "", {"test_recipe": (1.0, 1.0)})]
    summary = read_similarity(root, RECIPE)
    assert summary is not None and summary.page.is_file()
    best = {m.student: (m.partner, m.kind) for m in summary.matches}
    # Each copier once, with what they copied; ana (copied, not copying) is named too.
    assert best["copies-reference"] == ("reference", "reference")
    assert best["copies-2025"] == ("2025/bea", "archive")
    assert best["copies-ana"] == ("ana", "cohort") and best["ana"] == ("copies-ana", "cohort")
    assert not {"blank", "garbled", "absent"} & set(best)
    report = AssignmentReport(RECIPE, 1.0, graded, [], [], None, None, similarity=summary)
    page = render_report(report, {}, "../../similarity/00-recipe/report.html")
    assert 'href="../../similarity/00-recipe/report.html"' in page
    assert "copies-reference" in page and "Code similarity" in page
    # No similarity run: the report says so, and nothing breaks.
    assert read_similarity(root, "01-worked-example") is None
    plain = render_report(AssignmentReport(RECIPE, 1.0, graded, [], [], None, None), {})
    assert "No similarity run for this assignment" in plain


# Independent solutions of 01: five students who wrote every exercise their own way
# (tests/fixtures/independent_01/), and copies of them and of the reference disguised with
# helpers inlined at their call sites.
INDEPENDENT = [path.stem for path in implementations()]
HONEST = [*INDEPENDENT, "reference"]


def whole_engine_matches_torch(namespace: dict) -> None:
    """The student's whole engine, no exercise lent, on models that use every exercise."""
    check_parity, tensor = namespace["check_parity"], namespace["Tensor"]
    linear, mse_loss = namespace["Linear"], namespace["mse_loss"]
    import torch.nn.functional as F

    rng = np.random.default_rng(28)
    data = {
        "x": rng.standard_normal((5, 3)),
        "w": rng.standard_normal((2, 3)),
        "b": rng.standard_normal(2),
        "t": rng.uniform(0.2, 0.8, (5, 2)),
        "u": rng.standard_normal(3),
    }

    def model(x, w, b, t, u):
        h = (x @ w.T + b).sigmoid()  # h and x are used several times: gradients accumulate
        loss = ((h - t) ** 2).mean() + (x @ u).exp().sum() / 4.0
        return loss + (x * u).relu().mean(axis=0).sum() + (h.log() * t).sum(axis=1).mean()

    def engine_layer(x, t, w, b):
        layer = linear(3, 2)
        layer.weight, layer.bias = w, b
        return mse_loss(layer(x).tanh(), t)

    def torch_layer(x, t, w, b):
        return F.mse_loss(F.linear(x, w, b).tanh(), t)

    check_parity(model, data, tensor_type=tensor, quiet=True)
    layer_data = {k: data[k] for k in ("x", "t", "w", "b")}
    check_parity(engine_layer, layer_data, tensor_type=tensor, torch_fn=torch_layer, quiet=True)


@pytest.mark.parametrize("path", implementations(), ids=lambda path: path.stem)
def test_each_independent_solution_is_correct(path):
    """Every graded cell, hidden tests included, passes; so does the whole engine at once."""
    namespace = run_graded_cells(student_notebook(path))
    whole_engine_matches_torch(namespace)


def disguised_copy(notebook: nbformat.NotebookNode) -> tuple[nbformat.NotebookNode, int]:
    """``notebook`` with each solution cell inlined and disguised; the calls inlined."""
    copy = nbformat.reads(nbformat.writes(notebook), as_version=4)
    inlined = 0
    for cell in copy.cells:
        if cell.metadata.get("nbgrader", {}).get("solution"):
            inlined += inline_helpers(ast.parse(cell.source))
            cell.source = disguise(cell.source, split=False, inline=True)
    return copy, inlined


@pytest.fixture(scope="module")
def independent_cohort(tmp_path_factory):
    """01: the five independent students and a copy of each (and of the reference), with
    helpers inlined; compared at the default settings, every pair located (floor 0)."""
    root = course_root(tmp_path_factory.mktemp("independent"), WORKED)
    sources = {path.stem: student_notebook(path) for path in implementations()}
    sources["reference"] = build_submission("reference", WORKED, SOLUTIONS_DIR, COURSE_DIR)
    copies, inlined = {}, {}
    for name, notebook in sources.items():
        if name != "reference":
            hand_in(root / "submitted", name, WORKED, notebook)
        copies[name], inlined[name] = disguised_copy(notebook)
        hand_in(root / "submitted", f"copies-{name}", WORKED, copies[name])
    run = run_similarity(load_course(root), WORKED, [], replace(Settings(), floor=0.0))
    return run, copies, inlined


def test_independent_solutions_are_never_flagged(independent_cohort):
    """The false-positive rate on independent correct work: none of 15 pairs flagged."""
    run, _, _ = independent_cohort
    settings = Settings()
    scores = {frozenset({p.a, p.b}): p for p in run.pairs}
    pairs = list(combinations(HONEST, 2))
    found = {pair: scores.get(frozenset(pair)) for pair in pairs}
    print("\nhonest pair                    score  shared")
    for (a, b), pair in sorted(found.items(), key=lambda i: -(i[1].score if i[1] else 0)):
        print(f"{a:14} {b:14} {pair.score if pair else 0.0:6.3f} {pair.overlap if pair else 0:6d}")
    flagged = [pair for pair in found.values() if pair and pair.flagged(settings)]
    highest = max(pair.score if pair else 0.0 for pair in found.values())
    print(f"highest honest score {highest:.3f}; false positives {len(flagged)}/{len(pairs)}")
    assert not flagged, flagged
    assert highest < settings.threshold
    assert len(INDEPENDENT) >= 5


def test_copies_disguised_by_inlining_rank_above_every_honest_pair(independent_cohort):
    run, _, inlined = independent_cohort
    settings = Settings()
    planted = {frozenset({f"copies-{name}", name}) for name in HONEST}
    scores = {frozenset({p.a, p.b}): p for p in run.pairs}
    copied = {key: scores[key] for key in planted}
    honest = [p for key, p in scores.items() if key not in planted]
    for pair in sorted(copied.values(), key=lambda p: -p.score):
        print(f"{pair.a} ~ {pair.b}: {pair.score:.3f} flagged={pair.flagged(settings)}")
    print(f"highest other pair: {max(p.score for p in honest):.3f}")
    # Every copy had helpers inlined: clear_grads into zero_grad, and the students' own.
    assert all(count >= 1 for count in inlined.values()), inlined
    assert sum(inlined[name] >= 2 for name in INDEPENDENT) >= 4, inlined
    assert min(p.score for p in copied.values()) > max(p.score for p in honest)
    assert not [p for p in honest if p.flagged(settings)]
    assert copied[frozenset({"copies-reference", "reference"})].flagged(settings)


@pytest.mark.parametrize("name", HONEST)
def test_copies_with_helpers_inlined_still_pass_every_check(independent_cohort, name):
    """The rewriter keeps a copy working, as a copier would: inlining changes no result."""
    _, copies, _ = independent_cohort
    whole_engine_matches_torch(run_graded_cells(copies[name]))


def test_inlining_a_helper_with_early_returns_and_defaults():
    code = """\
def scale(x, factor=2):
    if x is None:
        return 0
    y = x * factor
    return y + 1


def use(values):
    total = 0
    for v in values:
        total += scale(v) + scale(None)
    return scale(total, 3)
"""
    tree = ast.parse(code)
    assert inline_helpers(tree) == 3
    rewritten = ast.unparse(ast.fix_missing_locations(tree))
    assert "def scale" not in rewritten and "scale(" not in rewritten
    before, after = {}, {}
    exec(code, before)
    exec(rewritten, after)
    assert after["use"]([1, 2, 5]) == before["use"]([1, 2, 5]) == 58


def test_similarity_page_in_chromium(recipe_cohort):
    """The HTML page of a cohort with planted copies, in a real browser; a screenshot of it
    goes to build/screenshots/similarity.png."""
    from browser_helpers import SCREENSHOTS, chromium

    root, _ = recipe_cohort
    page_path = root / "similarity" / RECIPE / "report.html"
    shot = SCREENSHOTS / "similarity.png"
    shot.parent.mkdir(parents=True, exist_ok=True)
    with chromium("similarity page test") as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(page_path.as_uri())
        rows = page.locator("table").first.locator("tr").all_inner_texts()
        marks = page.locator("mark").count()
        page.screenshot(path=str(shot), full_page=False)
    assert len(rows) == 1 + len(PLANTED)  # a head and one row per planted copy
    assert any("copies-reference" in row and "reference" in row for row in rows[1:])
    assert marks > 0 and shot.stat().st_size > 10_000


# Disguises at three levels, of independent honest students of 01 and 09
# (tests/disguised_cohort.py); the benchmark's table: python -m benchmarks.similarity_quality
@pytest.fixture(scope="module", params=[WORKED, "09-mixed-precision"])
def disguise_levels(request, tmp_path_factory):
    from disguised_cohort import write_cohort

    root, honest, copies = write_cohort(tmp_path_factory.mktemp("levels"), request.param)
    run = run_similarity(load_course(root), request.param, [], replace(Settings(), floor=0.0))
    return run, honest, copies


def test_no_honest_pair_is_flagged_not_even_in_09(disguise_levels):
    run, honest, _ = disguise_levels
    people = {*honest, "reference"}
    flagged = [p for p in run.pairs if {p.a, p.b} <= people and p.flagged(Settings())]
    assert not flagged, [(p.a, p.b, p.score, p.structure) for p in flagged]


@pytest.mark.parametrize("level", ["rename", "reorder"])
def test_renamed_and_reordered_copies_are_each_flagged(disguise_levels, level):
    run, _, copies = disguise_levels
    pairs = {frozenset({p.a, p.b}): p for p in run.pairs}
    for copier, made in copies.items():
        if made.startswith(level + ":"):
            pair = pairs[frozenset({copier, made.split(":")[1]})]
            print(f"{copier}: score {pair.score:.2f}, structure {pair.structure:.2f}")
            assert pair.flagged(Settings()), (copier, pair.score, pair.structure)
