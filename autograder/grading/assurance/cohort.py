"""The demo cohort: students whose submissions are built from the course itself.

A submission is the student release with the solution cells typed in (the reference
solution without nbgrader's markers), then, for a buggy student, one realistic mistake
planted by text replacement. Building them from solutions/ and course/ at run time keeps
the cohort in step with the notebooks: a bug whose text no longer occurs is an error,
not a silently correct student.
"""

from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.utils import is_solution

from autograder.grading.authoring.engine_sync import strip_solution_markers
from autograder.grading.course.repo_paths import assignments, notebook_path


@dataclass(frozen=True)
class PlantedBug:
    """One student's mistake: text replacements in one solution cell, and its expected cost."""

    student: str
    assignment: str
    cell: str  # nbgrader grade_id of the solution cell
    story: str  # what the student got wrong, in a line
    edits: tuple[tuple[str, str], ...]  # (text as solved, text as the student wrote it)
    # Test cells that must lose points; empty for a change that must cost nothing.
    loses: frozenset[str] = field(default_factory=frozenset)


BUGS: tuple[PlantedBug, ...] = (
    PlantedBug(
        student="bug-power-rule",
        assignment="00-recipe",
        cell="scalar",
        story="power rule off by one: n * x**n instead of n * x**(n - 1)",
        edits=(
            (
                "derivative = exponent * self.data ** (exponent - 1)",
                "derivative = exponent * self.data**exponent",
            ),
        ),
        loses=frozenset({"test_scalar_ops", "test_recipe"}),
    ),
    PlantedBug(
        student="bug-no-grad-not-restored",
        assignment="00-recipe",
        cell="no_grad",
        story="no_grad switches recording back on at exit instead of restoring the old state",
        edits=(("_grad_enabled = self._previous", "_grad_enabled = True"),),
        loses=frozenset({"test_no_grad"}),
    ),
    PlantedBug(
        student="noisy-but-correct",
        assignment="01-worked-example",
        cell="unbroadcast",
        story="correct, but warns on stderr from unbroadcast: warnings must not cost points",
        edits=(
            ("def unbroadcast(", "import warnings\n\n\ndef unbroadcast("),
            (
                "    # Dimensions that broadcasting prepended",
                '    warnings.warn("unbroadcast called", RuntimeWarning, stacklevel=1)\n'
                "    # Dimensions that broadcasting prepended",
            ),
        ),
    ),
    PlantedBug(
        student="bug-missing-unbroadcast",
        assignment="01-worked-example",
        cell="mul_div",
        story="Mul's backward returns output-shaped gradients without unbroadcast",
        edits=(
            (
                "return unbroadcast(grad * b, a.shape), unbroadcast(grad * a, b.shape)",
                "return grad * b, grad * a",
            ),
        ),
        loses=frozenset({"test_mul_div"}),
    ),
    PlantedBug(
        student="bug-overwrite-leaf-grad",
        assignment="01-worked-example",
        cell="backward",
        story="leaf gradients assigned with = instead of accumulated with +=",
        edits=(
            (
                "tensor.grad = grad.copy() if tensor.grad is None else tensor.grad + grad",
                "tensor.grad = grad.copy()",
            ),
        ),
        loses=frozenset({"test_backward"}),
    ),
    PlantedBug(
        student="bug-matmul-no-transpose",
        assignment="01-worked-example",
        cell="matmul",
        story="matmul backward multiplies by B instead of B transposed",
        edits=(("grad_a = grad2 @ b2.swapaxes(-1, -2)", "grad_a = grad2 @ b2"),),
        loses=frozenset({"test_matmul"}),  # test_linear borrows the reference's MatMul
    ),
    PlantedBug(
        student="bug-preorder-backward",
        assignment="01-worked-example",
        cell="backward",
        story="backward visits tensors depth-first as reached, not in topological order",
        edits=(
            (
                "    for tensor in reversed(topological_order(root)):\n",
                "    stack, seen = [root], {id(root)}\n"
                "    while stack:\n"
                "        tensor = stack.pop()\n",
            ),
            (
                "                grads[id(parent)] = parent_grad",
                "                grads[id(parent)] = parent_grad\n"
                "            if id(parent) not in seen:\n"
                "                seen.add(id(parent))\n"
                "                stack.append(parent)",
            ),
        ),
        # The other exercises' checks borrow the reference's run_backward.
        loses=frozenset({"test_backward"}),
    ),
    PlantedBug(
        student="bug-sum-ignores-shape",
        assignment="01-worked-example",
        cell="reductions",
        story="Sum's backward returns the output gradient as is, ignoring the input's shape",
        edits=(("return (broadcast_to(grad, ctx.shape),)", "return (grad,)"),),
        loses=frozenset({"test_reductions"}),
    ),
)

BUGS += (
    PlantedBug(
        student="bug-graph-kept",
        assignment="02-how-it-works",
        cell="tensor",
        story="frees the graph only when asked to retain it (condition inverted)",
        edits=(("if not retain_graph:", "if retain_graph:"),),
        # Tensor.backward is given code in the Tensor cell: every check that frees a graph.
        loses=frozenset({"test_free_graph", "test_retain_grad", "test_release"}),
    ),
    PlantedBug(
        student="bug-new-leaf-node",
        assignment="02-how-it-works",
        cell="graph_nodes",
        story="makes a new AccumulateGrad node on every call, so one leaf has several nodes",
        edits=(
            (
                '    if getattr(tensor, "_accumulate_grad", None) is None:\n'
                "        tensor._accumulate_grad = AccumulateGrad(tensor)\n"
                "    return tensor._accumulate_grad",
                "    return AccumulateGrad(tensor)",
            ),
        ),
        loses=frozenset({"test_graph_structure"}),
    ),
    PlantedBug(
        student="bug-detach-copies",
        assignment="03-gradient-controls",
        cell="tensor",
        story="detach() copies the data instead of sharing it",
        edits=(("detached = Tensor(self.data)", "detached = Tensor(self.data.copy())"),),
        loses=frozenset({"test_detach"}),
    ),
    PlantedBug(
        student="bug-one-sided-differences",
        assignment="04-custom-functions",
        cell="gradcheck",
        story="gradcheck uses one-sided differences (f(x + eps) - f(x)) / eps",
        edits=(
            ("x[element] = original - eps", "x[element] = original"),
            ("(plus - minus) / (2 * eps)", "(plus - minus) / eps"),
        ),
        loses=frozenset({"test_gradcheck"}),
    ),
    PlantedBug(
        student="bug-version-not-bumped",
        assignment="05-common-pitfalls",
        cell="tensor",
        story="add_ changes the data in place but does not bump the version counter",
        edits=(
            (
                "        self.data += self._lift(other).data\n        self._version += 1\n",
                "        self.data += self._lift(other).data\n",
            ),
        ),
        # SGD's check borrows the reference's add_, so only add_'s own check loses.
        loses=frozenset({"test_inplace"}),
    ),
    PlantedBug(
        student="bug-version-check-lenient",
        assignment="05-common-pitfalls",
        cell="function",
        story="check_versions looks at the first saved tensor only, not at every one",
        edits=(
            (
                "for tensor, version in self.saved_versions:",
                "for tensor, version in self.saved_versions[:1]:",
            ),
        ),
        loses=frozenset({"test_saved_versions"}),
    ),
    PlantedBug(
        student="bug-history-keeps-graphs",
        assignment="05-common-pitfalls",
        cell="loss_history",
        story="the loss history keeps the loss tensors, so every step's graph stays alive",
        edits=(("history.append(loss.item())", "history.append(loss)"),),
        loses=frozenset({"test_loss_history"}),
    ),
    PlantedBug(
        student="bug-manual-forgets-tanh",
        assignment="06-alternatives",
        cell="manual_mlp",
        story="the hand-derived backward skips the tanh derivative",
        edits=(("d_pre = d_hidden * (1 - hidden**2)", "d_pre = d_hidden"),),
        loses=frozenset({"test_manual_mlp"}),
    ),
    PlantedBug(
        student="bug-loop-without-zero-grad",
        assignment="08-capstone",
        cell="train_step",
        story="the training step never clears gradients, so they pile up across steps",
        edits=(("    optimizer.zero_grad(set_to_none=True)\n", ""),),
        # The MLP's check borrows the reference's train_step.
        loses=frozenset({"test_training_matches_torch"}),
    ),
    PlantedBug(
        student="bug-vjp-ignores-gradient",
        assignment="07-faq",
        cell="vjp",
        story="vjp calls y.sum().backward(), ignoring v: every VJP is the column sums of J",
        edits=(("y.backward(gradient=np.asarray(v, dtype=y.dtype))", "y.sum().backward()"),),
        loses=frozenset({"test_vjp", "test_jacobian"}),
    ),
    PlantedBug(
        student="bug-clip-each-tensor",
        assignment="07-faq",
        cell="clip_grad_norm",
        story="clip_grad_norm_ clips each gradient by its own norm instead of the joint norm",
        edits=(
            (
                "    scale = min(max_norm / (total + 1e-6), 1.0)\n    for g in grads:\n"
                "        g *= scale",
                "    for g in grads:\n        own_norm = np.linalg.norm(g.reshape(-1), norm_type)\n"
                "        g *= min(max_norm / (own_norm + 1e-6), 1.0)",
            ),
        ),
        loses=frozenset({"test_clip_grad_norm"}),
    ),
    PlantedBug(
        student="bug-flow-lists-frozen",
        assignment="07-faq",
        cell="gradient_flow",
        story="parameters_without_grad lists frozen parameters, not those without a gradient",
        edits=(("if parameter.grad is None]", "if not parameter.requires_grad]"),),
        loses=frozenset({"test_gradient_flow"}),
    ),
    PlantedBug(
        student="bug-encoder-not-frozen",
        assignment="07-faq",
        cell="transfer_step",
        story="transfer_step runs the encoder outside no_grad, so the encoder gets gradients",
        edits=(
            ("    with no_grad():\n        features = encoder(x)", "    features = encoder(x)"),
        ),
        loses=frozenset({"test_transfer_step"}),
    ),
    PlantedBug(
        student="bug-sqrt-not-differentiable",
        assignment="07-faq",
        cell="sqrt",
        story="Sqrt saves its derivative as a plain array: create_graph silently gives zeros",
        edits=(
            ("ctx.save_for_backward(out)", "ctx.save_for_backward(0.5 / out)  # computed once"),
            (
                "(out,) = ctx.saved_tensors\n        return (grad / (2.0 * out),)",
                "(derivative,) = ctx.saved_tensors\n        return (grad * derivative,)",
            ),
        ),
        # test_hvp borrows the reference's Sqrt: only Sqrt's own check loses.
        loses=frozenset({"test_sqrt"}),
    ),
    PlantedBug(
        student="bug-scaler-misses-nan",
        assignment="09-mixed-precision",
        cell="loss_scaler",
        story="the loss scaler looks for inf only: it steps on a NaN gradient and never backs off",
        edits=(
            (
                "if not np.isfinite(parameter.grad).all():",
                "if np.isinf(parameter.grad).any():",
            ),
        ),
        loses=frozenset({"test_loss_scaler"}),
    ),
)


REFERENCE = "reference"
BLANK = "blank"


def students() -> list[str]:
    """Every student of the demo cohort, reference and blank first."""
    return [REFERENCE, BLANK, *(bug.student for bug in BUGS)]


def submitted_assignments(student: str, all_assignments: list[str]) -> list[str]:
    """The notebooks a student hands in: all for reference and blank, else the bug's own.

    A planted student's other notebooks would be the reference's, byte for byte (each
    notebook carries its whole engine), so grading them again would only repeat the
    reference's full marks; handing in one notebook keeps the demo's grading time down.
    """
    own = sorted({bug.assignment for bug in BUGS if bug.student == student})
    return all_assignments if student in (REFERENCE, BLANK) else own


def solved_sources(solution_notebook: Path) -> dict[str, str]:
    """Each solution cell's source as a student who solved it would have typed it."""
    notebook = nbformat.read(solution_notebook, as_version=4)
    return {
        cell.metadata["nbgrader"]["grade_id"]: strip_solution_markers(cell.source)
        for cell in notebook.cells
        if is_solution(cell)
    }


def plant_edit(source: str, before: str, after: str, place: str) -> str:
    """``source`` with ``before`` replaced by ``after`` (appended when ``before`` is empty).

    ``before`` must occur exactly once: text the notebooks no longer have (or have twice)
    is an error naming ``place``, never a planted change that silently does nothing.
    """
    if not before:
        return source.rstrip("\n") + "\n\n" + after
    count = source.count(before)
    if count != 1:
        raise ValueError(f"{place}: expected {before!r} once, found it {count} times")
    return source.replace(before, after)


def apply_bug(source: str, bug: PlantedBug) -> str:
    """Plant ``bug`` in its solution cell's source, one edit after the other."""
    place = f"planted bug {bug.student!r} in cell {bug.cell!r} of {bug.assignment}"
    for before, after in bug.edits:
        source = plant_edit(source, before, after, place)
    return source


def build_submission(
    student: str, assignment: str, solutions_dir: Path, release_dir: Path
) -> nbformat.NotebookNode:
    """The notebook ``student`` hands in for ``assignment``."""
    notebook = nbformat.read(notebook_path(release_dir, assignment), as_version=4)
    if student == BLANK:
        return notebook
    sources = solved_sources(notebook_path(solutions_dir, assignment))
    bugs = [b for b in BUGS if b.student == student and b.assignment == assignment]
    for bug in bugs:
        if bug.cell not in sources:
            raise ValueError(f"planted bug {bug.student!r}: no solution cell {bug.cell!r}")
        sources[bug.cell] = apply_bug(sources[bug.cell], bug)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if is_solution(cell) and grade_id in sources:
            cell.source = sources[grade_id]
    return notebook


def write_cohort(submitted_dir: Path, solutions_dir: Path, release_dir: Path) -> list[str]:
    """Write every demo student's submissions in nbgrader's submitted/ layout."""
    for student in students():
        for assignment in submitted_assignments(student, assignments(solutions_dir)):
            target = notebook_path(submitted_dir / student, assignment)
            target.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(
                build_submission(student, assignment, solutions_dir, release_dir), target
            )
    return students()
