"""Other exercises' methods from the reference engine while one exercise is checked.

A notebook's exercises share classes (05's ``SGD.step`` calls ``Tensor.add_``, another
exercise; 00's ``no_grad`` is checked on ``Scalar`` arithmetic): a check that lends the
reference's version of the other exercise's methods for its block passes a correct answer
whatever state that other exercise is in. The lent methods run as if typed in the notebook:
their global names (``Tensor``, ``is_grad_enabled``, ...) are the notebook's, and a
zero-argument ``super()`` starts from the notebook's class.

At grading time with trusted verdicts the classes live in the student's kernel, so the
lending happens there: the trusted kernel asks the student's kernel to enter and leave the
same block (the lent code is the reference's, never the student's).
"""

import inspect
import types
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from autograder.checks.student_side import in_student_kernel, in_trusted_kernel
from autograder.engine import (
    capstone,
    custom,
    double_backward,
    functional,
    grad_mode,
    gradcheck,
    jacobian,
    nn,
    optim,
    scalar,
    tensor,
    transfer,
)

REFERENCE_MODULES = (
    tensor,
    scalar,
    grad_mode,
    nn,
    optim,
    custom,
    gradcheck,
    functional,
    jacobian,
    double_backward,
    transfer,
    capstone,
)


def reference_class(name: str) -> type:
    """The reference engine's class called ``name`` (its last definition, every part in)."""
    for module in REFERENCE_MODULES:
        found = getattr(module, name, None)
        if isinstance(found, type):
            return found
    raise LookupError(f"the reference engine has no class {name!r}")


def functions_of(value: Any) -> list[types.FunctionType]:
    """The plain functions inside a class attribute (a property's accessors, a staticmethod's)."""
    if isinstance(value, property):
        return [f for f in (value.fget, value.fset, value.fdel) if f is not None]
    if isinstance(value, staticmethod | classmethod):
        return [value.__func__]
    return [value] if isinstance(value, types.FunctionType) else []


def notebook_namespace(cls: type) -> dict[str, Any]:
    """The global names the notebook's methods of ``cls`` see (the kernel's namespace)."""
    for klass in cls.__mro__:
        for value in vars(klass).values():
            for function in functions_of(value):
                return function.__globals__
    raise LookupError(f"{cls.__name__} has no method to take the notebook's names from")


def rebind(value: Any, namespace: dict[str, Any], owner: type) -> Any:
    """``value`` (function, property, static or class method) as if defined in ``owner``."""
    if isinstance(value, property):
        accessors = (value.fget, value.fset, value.fdel)
        parts = [None if f is None else rebind(f, namespace, owner) for f in accessors]
        return property(*parts, value.__doc__)
    if isinstance(value, staticmethod | classmethod):
        return type(value)(rebind(value.__func__, namespace, owner))
    if not isinstance(value, types.FunctionType):
        return value
    cells = value.__closure__ or ()
    closure = tuple(
        types.CellType(owner) if name == "__class__" else cell
        for name, cell in zip(value.__code__.co_freevars, cells, strict=True)
    )
    function = types.FunctionType(
        value.__code__, namespace, value.__name__, value.__defaults__, closure or None
    )
    function.__kwdefaults__ = value.__kwdefaults__
    function.__qualname__ = value.__qualname__
    return function


# This module as the student's kernel imports it (asked from the trusted kernel).
HERE_IN_STUDENT_KERNEL = "__import__('autograder.checks.given', fromlist=['_'])"


@contextmanager
def reference_methods(cls: type, *names: str) -> Iterator[None]:
    """Inside the block, ``cls``'s methods ``names`` are the reference engine's; restored after."""
    if in_trusted_kernel():
        expression = f"{HERE_IN_STUDENT_KERNEL}.reference_methods(cls, *names)"
        with in_student_kernel(expression, cls=cls, names=list(names)):
            yield
        return
    reference = reference_class(cls.__name__)
    namespace = notebook_namespace(cls)
    own = {name: cls.__dict__[name] for name in names if name in cls.__dict__}
    try:
        for name in names:
            setattr(cls, name, rebind(inspect.getattr_static(reference, name), namespace, cls))
        yield
    finally:
        for name in names:
            if name in own:
                setattr(cls, name, own[name])
            elif name in cls.__dict__:
                delattr(cls, name)


@contextmanager
def reference_parts(parts: dict[type, tuple[str, ...]]) -> Iterator[None]:
    """``reference_methods`` for several classes at once: ``{Tensor: ("add_",), ...}``."""
    with ExitStack() as stack:
        for cls, names in parts.items():
            stack.enter_context(reference_methods(cls, *names))
        yield


def reference_function(name: str) -> types.FunctionType:
    """The reference engine's module-level function called ``name``."""
    for module in REFERENCE_MODULES:
        found = getattr(module, name, None)
        if isinstance(found, types.FunctionType):
            return found
    raise LookupError(f"the reference engine has no function {name!r}")


@contextmanager
def reference_functions(namespace: dict[str, Any], *names: str) -> Iterator[None]:
    """Inside the block, the notebook's functions ``names`` are the reference's; restored after."""
    own = {name: namespace[name] for name in names if name in namespace}
    try:
        for name in names:
            namespace[name] = rebind(reference_function(name), namespace, object)
        yield
    finally:
        for name in names:
            if name in own:
                namespace[name] = own[name]
            else:
                namespace.pop(name, None)


@contextmanager
def current_student_functions(namespace: dict[str, Any], names: list[str]) -> Iterator[None]:
    """In the trusted kernel, rebind ``names`` to what the student's kernel holds now.

    A test cell's names are bound to the student's objects when the cell starts; a function
    lent inside the block replaces the student's global there, so code run here (08's
    ``train_both`` calls ``train_step``) must look it up again, and get the old one after.
    """
    own = {name: namespace[name] for name in names if name in namespace}
    try:
        for name in own:
            namespace[name] = in_student_kernel("get_ipython().user_ns[name]", name=name)
        yield
    finally:
        namespace.update(own)


# What each exercise (solution cell) of a notebook defines: "function" or "Class.method".
EXERCISE_PARTS: dict[str, dict[str, tuple[str, ...]]] = {
    "01-worked-example": {
        "unbroadcast": ("unbroadcast",),
        "backward": ("run_backward",),
        "mul_div": ("Mul.backward", "Div.backward"),
        "elementwise": (
            "Pow.backward",
            "Exp.backward",
            "Log.backward",
            "Tanh.backward",
            "ReLU.backward",
            "Sigmoid.backward",
        ),
        "matmul": ("MatMul.backward",),
        "reductions": ("Sum.backward", "Mean.backward"),
        "module": ("clear_grads", "Module.named_parameters", "Linear.forward", "mse_loss"),
    },
    "02-how-it-works": {
        "function": ("Context.release", "Context.next_functions"),
        "tensor": ("Tensor.retain_grad", "Tensor.keeps_grad"),
        "graph_nodes": ("graph_node",),
        "backward": ("release_graph",),
    },
    "03-gradient-controls": {
        "no_grad": ("no_grad.__call__",),
        "grad_modes": (
            "enable_grad.__enter__",
            "inference_mode.__enter__",
            "inference_mode.__exit__",
        ),
        "tensor": ("Tensor.requires_grad_", "Tensor.detach"),
    },
    "04-custom-functions": {
        "validate_gradients": ("validate_gradients",),
        "my_relu": ("MyReLU.forward", "MyReLU.backward"),
        "gradcheck": ("numerical_jacobian", "analytical_jacobian", "gradcheck"),
    },
    "06-alternatives": {
        "functional_grad": ("grad",),
        "per_sample": ("per_sample_grads_loop", "per_sample_grads_linear"),
        "manual_mlp": ("manual_mlp_grads",),
    },
    "07-faq": {
        "vjp": ("vjp", "jacobian"),
        "gradient_flow": ("parameters_without_grad",),
        "clip_grad_norm": ("clip_grad_norm_",),
        "sqrt": ("Sqrt.forward", "Sqrt.backward"),
        "hvp": ("hvp",),
        "transfer_step": ("transfer_step",),
    },
    "08-capstone": {"mlp": ("MLP.forward",), "train_step": ("train_step",)},
}


class Exercises:
    """A notebook's exercises, to check one of them with the reference for all the others."""

    def __init__(self, notebook: str, namespace: dict[str, Any]) -> None:
        if notebook not in EXERCISE_PARTS:
            raise KeyError(f"no exercises declared for notebook {notebook!r}")
        self.notebook = notebook
        self.parts = EXERCISE_PARTS[notebook]
        self.namespace = namespace

    def lent(self, checked: tuple[str, ...]) -> list[str]:
        """The parts lent by the reference while ``checked`` (exercises or parts) is checked."""
        every_part = [part for parts in self.parts.values() for part in parts]
        unknown = [name for name in checked if name not in self.parts and name not in every_part]
        if unknown:
            raise KeyError(f"no exercise or part {unknown}; exercises: {sorted(self.parts)}")
        kept = {part for name in checked for part in self.parts.get(name, (name,))}
        # Parts of cells not run yet (below this check) cannot be what the check runs.
        return [
            part for part in every_part if part not in kept and part.split(".")[0] in self.namespace
        ]

    @contextmanager
    def alone(self, *checked: str) -> Iterator[None]:
        """Inside the block, every part of the notebook is the reference's except ``checked``.

        ``checked`` names exercises (solution cells) or single parts (``"Context.release"``).
        So the block checks those alone: a correct answer passes whatever state the
        notebook's other exercises are in (written, unwritten or wrong).
        """
        others = self.lent(checked)
        functions = [part for part in others if "." not in part]
        if in_trusted_kernel():
            expression = (
                f"{HERE_IN_STUDENT_KERNEL}.Exercises(notebook, get_ipython().user_ns)"
                ".alone(*checked)"
            )
            with in_student_kernel(expression, notebook=self.notebook, checked=list(checked)):
                with current_student_functions(self.namespace, functions):
                    yield
            return
        methods: dict[type, tuple[str, ...]] = {}
        for part in others:
            if "." in part:
                class_name, method = part.split(".")
                cls = self.namespace[class_name]
                methods[cls] = (*methods.get(cls, ()), method)
        with reference_functions(self.namespace, *functions), reference_parts(methods):
            yield
