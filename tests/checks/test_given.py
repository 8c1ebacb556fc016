"""Borrowing the reference's methods for one check: the notebook's names, restored after."""

import contextlib
import types

import nbformat
import pytest

from autograder.checks import student_side
from autograder.checks.given import (
    Exercises,
    reference_methods,
    reference_parts,
)
from autograder.grading.authoring.engine_sync import strip_solution_markers
from autograder.grading.course.repo_paths import COURSE_DIR, SOLUTIONS_DIR, notebook_path


def kernel_namespace(assignment, released, solved=()):
    """A notebook's namespace: its released cells ``released`` run, ``solved`` ones solved."""
    course = nbformat.read(notebook_path(COURSE_DIR, assignment), as_version=4)
    solutions = nbformat.read(notebook_path(SOLUTIONS_DIR, assignment), as_version=4)
    solved_cells = {
        c.metadata["nbgrader"]["grade_id"]: strip_solution_markers(c.source)
        for c in solutions.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") in solved
    }
    namespace = {"__name__": "__main__"}
    for cell in course.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in released:
            exec(cell.source, namespace)
        elif grade_id in solved_cells:
            exec(solved_cells[grade_id], namespace)
    return namespace


def test_borrowed_arithmetic_follows_the_notebooks_own_grad_mode():
    ns = kernel_namespace("00-recipe", {"setup", "grad_switch", "scalar"}, solved={"no_grad"})
    scalar = ns["Scalar"]
    with pytest.raises(NotImplementedError):
        scalar(1.0) + 1.0  # as released
    with reference_methods(scalar, "__add__", "__mul__", "__radd__", "__rmul__"):
        x = scalar(2.0, requires_grad=True)
        y = x * x + 1.0
        with ns["no_grad"]():  # the notebook's no_grad and _grad_enabled, not the engine's
            z = x * 3.0
    assert type(y) is scalar and y.data == 5.0 and y.requires_grad
    assert not z.requires_grad
    with pytest.raises(NotImplementedError):
        scalar(1.0) + 1.0  # the notebook's own methods are back


def test_borrowed_property_with_super_and_several_classes():
    cells = {"setup", "grad_switch", "no_grad", "grad_modes", "unbroadcast", "function", "tensor"}
    cells |= {"add_sub_neg", "shape_ops", "mul_div", "elementwise", "matmul", "reductions"}
    cells |= {"validate_gradients", "graph_nodes", "backward", "module"}
    ns = kernel_namespace("05-common-pitfalls", cells)
    tensor, context = ns["Tensor"], ns["Context"]

    def modified_after_saving():
        w = tensor(ns["np"].ones(3), requires_grad=True)
        c = tensor(ns["np"].full(3, 2.0))
        y = (w * c).sum()
        c.add_(1.0)
        y.backward()

    with reference_parts({tensor: ("add_", "mul_"), context: ("check_versions",)}):
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            modified_after_saving()
    assert "check_versions" in vars(context) and "add_" in vars(tensor)
    with pytest.raises(NotImplementedError):
        modified_after_saving()  # the released add_ again


def test_one_exercise_alone_with_every_other_unwritten():
    cells = {"setup", "grad_switch", "no_grad", "unbroadcast", "function", "tensor"}
    cells |= {"add_sub_neg", "shape_ops", "backward", "elementwise", "matmul", "reductions"}
    ns = kernel_namespace("01-worked-example", cells, solved={"mul_div"})
    exercises = ns["Exercises"]("01-worked-example", ns)
    np = ns["np"]
    a_values, b_values = np.arange(6.0).reshape(2, 3), np.array([1.0, 2.0, 4.0])

    def gradients():
        a = ns["Tensor"](a_values, requires_grad=True)
        b = ns["Tensor"](b_values, requires_grad=True)
        (a * b).backward(np.ones((2, 3)))  # needs unbroadcast and run_backward, unwritten
        return a.grad, b.grad

    with pytest.raises(NotImplementedError):
        gradients()
    with exercises.alone("mul_div"):  # Module, Linear, ... are not defined yet: skipped
        grad_a, grad_b = gradients()
    assert np.array_equal(grad_a, np.broadcast_to(b_values, (2, 3)))
    assert np.array_equal(grad_b, a_values.sum(axis=0))
    with pytest.raises(NotImplementedError):
        gradients()  # the notebook's own unbroadcast and run_backward again
    with exercises.alone("backward"), pytest.raises(NotImplementedError):
        gradients()  # run_backward is the exercise checked: the unwritten one runs
    with pytest.raises(KeyError, match="no exercise or part"):
        with exercises.alone("mul-div"):
            pass


def test_alone_lends_every_other_part_as_source_never_a_checked_one(monkeypatch):
    from autograder.checks import given

    lent_sources = {}

    def spy(namespace, sources):
        lent_sources.update(sources)
        return given.ExitStack()

    monkeypatch.setattr(given, "lent", spy)
    exercises = given.Exercises("01-worked-example", {})
    with exercises.alone("mul_div", "Sum.backward"):
        pass
    every = {p for parts in given.EXERCISE_PARTS["01-worked-example"].values() for p in parts}
    checked = {"Mul.backward", "Div.backward", "Sum.backward"}
    assert set(lent_sources) == every - checked
    assert all(isinstance(s, str) and "def " in s for s in lent_sources.values())
    assert "class Mul" not in "".join(lent_sources.values())


class StudentSide:
    """A context manager of the fake student kernel: entered and left there (no evaluator)."""

    def __init__(self, manager, evaluators):
        self.manager, self.evaluators = manager, evaluators

    def __enter__(self):
        with self.evaluators.off():
            return self.manager.__enter__()

    def __exit__(self, *exc_info):
        with self.evaluators.off():
            return self.manager.__exit__(*exc_info)


class FakeStudentKernel:
    """The trusted kernel's evaluator, answered in this process from ``user_ns``."""

    def __init__(self, user_ns, monkeypatch):
        self.user_ns, self.registered = user_ns, [self.evaluate]
        monkeypatch.setattr(student_side, "_evaluators", self.registered)

    @contextlib.contextmanager
    def off(self):
        self.registered.clear()
        try:
            yield
        finally:
            self.registered.append(self.evaluate)

    def evaluate(self, expression, names):
        shell = types.SimpleNamespace(user_ns=self.user_ns)
        with self.off():
            value = student_side.evaluate_here(expression, {**names, "get_ipython": lambda: shell})
        return StudentSide(value, self) if hasattr(value, "__enter__") else value


def test_a_lent_function_is_looked_up_again_from_the_trusted_kernel(monkeypatch):
    # 08's train_both runs in the trusted kernel and calls train_step, bound to the
    # student's function when the test cell started; lent, it must be the reference's.
    cells = {"setup", "grad_switch", "no_grad", "unbroadcast", "function", "tensor"}
    cells |= {"add_sub_neg", "shape_ops", "mul_div", "elementwise", "matmul", "reductions"}
    cells |= {"grad_modes", "validate_gradients", "graph_nodes", "backward", "module", "sgd"}
    cells |= {"clip_grad_norm", "mlp"}
    cells |= {"train_step"}
    student = kernel_namespace("08-capstone", cells)
    FakeStudentKernel(student, monkeypatch)
    trusted = {"train_step": student["train_step"], "MLP": student["MLP"]}
    exercises = Exercises("08-capstone", trusted)
    released = student["train_step"]
    with exercises.alone("mlp"):
        assert trusted["train_step"] is student["train_step"] is not released
        # compiled from the reference's source, lent as text
        assert trusted["train_step"].__code__.co_filename == "<reference train_step>"
    assert trusted["train_step"] is student["train_step"] is released
    with pytest.raises(NotImplementedError):
        trusted["train_step"](None, None, None, None, 1.0)  # the released one again
    with exercises.alone("train_step"):
        assert trusted["train_step"] is student["train_step"]  # checked: never lent
        with pytest.raises(NotImplementedError):
            trusted["train_step"](None, None, None, None, 1.0)


class Node:
    """Stands for a graph node of the student's engine."""


def test_live_instances_counts_in_the_students_kernel_after_a_collection(monkeypatch):
    kept = [Node(), Node()]
    cycle = [Node()]
    cycle.append(cycle)  # garbage only a collection frees
    del cycle
    assert student_side.live_instances(Node) == 2
    kept.pop()
    assert student_side.live_instances(Node) == 1
    # the count is the student kernel's answer, never a trusted-side walk of proxies
    monkeypatch.setattr(student_side, "_evaluators", [lambda expression, names: 7])
    assert student_side.live_instances(Node) == 7
    monkeypatch.setattr(student_side, "_evaluators", [lambda expression, names: "7"])
    with pytest.raises(TypeError, match="live Node objects: not an int"):
        student_side.live_instances(Node)
