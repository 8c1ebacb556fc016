"""Hand-written mutants: realistic mistakes that no syntax operator makes.

The operators change one node at a time; a student's mistake is often a different plan:
clipping after the optimizer's step, clipping each parameter on its own, a threshold test
that skips the case torch still scales. Each mistake here is a text rewrite of one exercise's
solution cell: ``old`` (exactly once, inside the cell's solution region) becomes ``new``. They
are graded like generated mutants, in every run (sample or not), and named by their ``id``.
"""

from dataclasses import dataclass
from pathlib import Path

from autograder.grading.assurance.mutation.mutants import (
    Mutant,
    compiles,
    solution_cells,
    solution_regions,
    unified_diff,
)
from autograder.grading.authoring.engine_sync import strip_solution_markers

OPERATOR = "by-hand"


@dataclass(frozen=True)
class HandMutant:
    """One realistic mistake, as a rewrite of the reference solution cell's text."""

    id: str
    assignment: str
    cell: str  # nbgrader grade_id of the solution cell
    description: str
    old: str  # text of the reference cell (as marked), exactly once, in a solution region
    new: str


HAND_MUTANTS: tuple[HandMutant, ...] = (
    HandMutant(
        "hand-05-keeps-last-loss",
        "05-common-pitfalls",
        "loss_history",
        "records floats but keeps the last loss tensor on the model (for logging): its graph "
        "stays alive after training",
        "        history.append(loss.item())  # a float: the step's graph can go\n",
        "        history.append(loss.item())\n        model.last_loss = loss  # kept for logging\n",
    ),
    HandMutant(
        "hand-04-fixed-tolerances",
        "04-custom-functions",
        "gradcheck",
        "compares with torch's default tolerances whatever atol and rtol it is given",
        "np.allclose(analytical, numerical, rtol=rtol, atol=atol)",
        "np.allclose(analytical, numerical, rtol=1e-3, atol=1e-5)",
    ),
    HandMutant(
        "hand-07-threshold-gt",
        "07-faq",
        "clip_grad_norm",
        "scales only when the norm is above max_norm (torch scales at max_norm too, by "
        "max_norm / (norm + 1e-6))",
        "    scale = min(max_norm / (total + 1e-6), 1.0)\n"
        "    for g in grads:\n"
        "        g *= scale  # in place: the parameters' .grad arrays themselves\n",
        "    if total > max_norm:\n"
        "        for g in grads:\n"
        "            g *= max_norm / (total + 1e-6)\n",
    ),
    HandMutant(
        "hand-07-threshold-ge",
        "07-faq",
        "clip_grad_norm",
        "scales only from max_norm on (torch also scales a norm less than 1e-6 below it)",
        "    scale = min(max_norm / (total + 1e-6), 1.0)\n"
        "    for g in grads:\n"
        "        g *= scale  # in place: the parameters' .grad arrays themselves\n",
        "    if total >= max_norm:\n"
        "        for g in grads:\n"
        "            g *= max_norm / (total + 1e-6)\n",
    ),
    HandMutant(
        "hand-07-inf-without-abs",
        "07-faq",
        "clip_grad_norm",
        "the inf-norm as the largest entry, not the largest magnitude",
        "total = max(np.abs(g).max() for g in grads)",
        "total = max(g.max() for g in grads)",
    ),
    HandMutant(
        "hand-07-matrix-norm",
        "07-faq",
        "clip_grad_norm",
        "each gradient's norm as a matrix norm (not flattened first)",
        "np.linalg.norm(g.reshape(-1), norm_type)",
        "np.linalg.norm(g, norm_type)",
    ),
    HandMutant(
        "hand-07-each-separately",
        "07-faq",
        "clip_grad_norm",
        "each gradient scaled by its own norm instead of by the joint norm",
        "    for g in grads:\n        g *= scale  # in place",
        "    for g in grads:\n"
        "        g *= min(max_norm / (np.linalg.norm(g.reshape(-1), norm_type) + 1e-6), 1.0)\n"
        "        # in place",
    ),
    HandMutant(
        "hand-08-clip-after-step",
        "08-capstone",
        "train_step",
        "clips after the optimizer's step: the step uses the unclipped gradients",
        "    clip_grad_norm_(model.parameters(), max_norm)\n    optimizer.step()\n",
        "    optimizer.step()\n    clip_grad_norm_(model.parameters(), max_norm)\n",
    ),
    HandMutant(
        "hand-08-clip-each-parameter",
        "08-capstone",
        "train_step",
        "clips each parameter's gradient on its own instead of all of them together",
        "    clip_grad_norm_(model.parameters(), max_norm)\n",
        "    for parameter in model.parameters():\n"
        "        clip_grad_norm_([parameter], max_norm)\n",
    ),
    HandMutant(
        "hand-08-fixed-max-norm",
        "08-capstone",
        "train_step",
        "clips at a fixed 1.0 (a tutorial's value) instead of the max_norm argument",
        "    clip_grad_norm_(model.parameters(), max_norm)\n",
        "    clip_grad_norm_(model.parameters(), 1.0)\n",
    ),
    HandMutant(
        "hand-09-setattr-none-unregisters",
        "09-mixed-precision",
        "parameter",
        "None assigned to a registered parameter becomes a plain attribute, and the old "
        "parameter stays listed",
        "            parameters[name] = None  # still registered, as None: skipped when listing\n",
        "            object.__setattr__(self, name, None)\n",
    ),
    HandMutant(
        "hand-09-memo-per-branch",
        "09-mixed-precision",
        "parameter",
        "each submodule starts a memo of its own: a module reached twice is listed twice",
        "yield from module.named_modules(memo, ",
        "yield from module.named_modules(None, ",
    ),
    HandMutant(
        "hand-09-last-gradient-decides",
        "09-mixed-precision",
        "loss_scaler",
        "the inf/NaN check keeps only the last gradient's verdict, not any of them",
        "                if not np.isfinite(parameter.grad).all():\n"
        "                    self._found_inf = True\n",
        "                self._found_inf = not np.isfinite(parameter.grad).all()\n",
    ),
    HandMutant(
        "hand-09-float32-products",
        "09-mixed-precision",
        "loss_scaler",
        "backs off and grows in float32 arithmetic (torch multiplies in float64, then rounds)",
        "np.float32(np.float64(self._scale) * self.backoff_factor)",
        "self._scale * np.float32(self.backoff_factor)",
    ),
    HandMutant(
        "hand-09-skips-keep-count",
        "09-mixed-precision",
        "loss_scaler",
        "an overflow backs the scale off but leaves the count of clean steps as it was",
        "            self._growth_tracker = 0\n        else:",
        "        else:",
    ),
    HandMutant(
        "hand-09-step-always-unscales",
        "09-mixed-precision",
        "loss_scaler",
        "step unscales again after an explicit unscale_ (torch unscales only once)",
        '        if self._stage == "ready":\n            self.unscale_(optimizer)\n',
        "        self.unscale_(optimizer)\n",
    ),
    HandMutant(
        "hand-09-unscaled-backward",
        "09-mixed-precision",
        "amp_step",
        "backward from the loss itself: the scaler's scale never reaches the gradients",
        "    scaler.scale(loss).backward()\n",
        "    loss.backward()\n",
    ),
    HandMutant(
        "hand-09-update-before-step",
        "09-mixed-precision",
        "amp_step",
        "updates the scale before stepping",
        "    scaler.step(optimizer)\n    scaler.update()\n",
        "    scaler.update()\n    scaler.step(optimizer)\n",
    ),
)


def rewrite(hand: HandMutant, marked: str) -> str:
    """The marked cell with the mistake in it; ValueError unless ``old`` is there exactly
    once and wholly inside a solution region."""
    count = marked.count(hand.old)
    if count != 1:
        raise ValueError(f"{hand.id}: its old text is in {hand.cell} {count} times, not once")
    start = marked.index(hand.old)
    first = marked.count("\n", 0, start) + 1
    last = first + hand.old.rstrip("\n").count("\n")
    if not any(a <= first and last <= b for a, b in solution_regions(marked)):
        raise ValueError(f"{hand.id}: its old text is not inside a solution region of {hand.cell}")
    return marked.replace(hand.old, hand.new)


def hand_mutant(hand: HandMutant, marked: str) -> Mutant:
    """``hand`` as a gradable mutant of the solution cell ``marked`` (with its markers)."""
    reference = strip_solution_markers(marked)
    source = strip_solution_markers(rewrite(hand, marked))
    if source == reference or not compiles(source):
        raise ValueError(f"{hand.id}: the rewrite changes nothing or is not valid Python")
    start = marked.index(hand.old)
    line = len(strip_solution_markers(marked[:start] + "x").splitlines())
    return Mutant(
        assignment=hand.assignment,
        cell=hand.cell,
        operator=OPERATOR,
        what=hand.description,
        line=line,
        source=source,
        diff=unified_diff(hand.cell, reference, source),
        name=hand.id,
    )


def hand_mutants(solutions_dir: Path, assignment: str) -> list[Mutant]:
    """The hand-written mutants of one assignment, in the list's order."""
    hands = [h for h in HAND_MUTANTS if h.assignment == assignment]
    if not hands:
        return []
    cells = solution_cells(solutions_dir, assignment)
    return [hand_mutant(h, cells[h.cell]) for h in hands]
