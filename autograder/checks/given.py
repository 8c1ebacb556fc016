"""Other exercises' methods from the reference engine while one exercise is checked.

A notebook's exercises share classes (05's ``SGD.step`` calls ``Tensor.add_``, another
exercise; 00's ``no_grad`` is checked on ``Scalar`` arithmetic): a check that lends the
reference's version of the other exercise's methods for its block passes a correct answer
whatever state that other exercise is in. The lent methods run as if typed in the notebook:
their global names (``Tensor``, ``is_grad_enabled``, ...) are the notebook's, and a
zero-argument ``super()`` starts from the notebook's class.

What is lent travels as source text: the side that holds the reference engine reads the
lent parts' sources (``reference_sources``), the side that holds the notebook's classes
compiles them into the notebook (``lent``). In JupyterLab both are the student's kernel. At
grading time with trusted verdicts only the trusted kernel has the engine, and the student's
kernel never imports ``autograder.engine`` (a sandboxed one cannot: it is not there). The
trusted kernel sends the sources of the parts it lends, never of a part under test, and
never to the student's kernel itself: code a check calls could keep them there and answer
the other exercises with them later. It lends them to a short-lived copy of that kernel
(a fork, checked from outside to have no way back to the kernel: ``verdicts.lending``),
which serves the rest of the test cell and is killed when the cell ends, with everything it
was lent or made (a proxy of an object made there raises ReferenceError afterwards).

In the student kit there is no reference engine and no trusted kernel: there a check runs
the student's own parts of the other exercises and says which one to finish first when one
of them is unwritten (``autograder.checks.prerequisites``).
"""

import __future__

import ast
import importlib
import inspect
import textwrap
import types
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from autograder.checks.exercises import CATALOGUE, parts_by_exercise
from autograder.checks.prerequisites import own_parts, reference_installed
from autograder.checks.student_side import in_student_kernel, in_trusted_kernel, lending

# The reference engine's modules, in the order a class name is looked up (its last
# definition, every part in, comes first).
REFERENCE_MODULES = (
    "tensor",
    "scalar",
    "grad_mode",
    "nn",
    "optim",
    "custom",
    "gradcheck",
    "functional",
    "jacobian",
    "double_backward",
    "transfer",
    "capstone",
    "amp",
)


def kit_mode() -> bool:
    """True in the student kit: no trusted kernel lends here and no reference is installed."""
    return not in_trusted_kernel() and not reference_installed()


def reference_modules() -> list[types.ModuleType]:
    """The reference engine's modules, imported on first use (never in a graded kernel)."""
    return [importlib.import_module(f"autograder.engine.{name}") for name in REFERENCE_MODULES]


def reference_class(name: str) -> type:
    """The reference engine's class called ``name`` (its last definition, every part in)."""
    for module in reference_modules():
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


def _source(function: types.FunctionType) -> str:
    """A function's definition (decorators included), dedented."""
    return textwrap.dedent(inspect.getsource(function))


def part_source(part: str) -> str:
    """The reference's definition of ``part`` (``"function"`` or ``"Class.attribute"``): a
    function's source, or the source of a class attribute's functions in class-body order
    (a property's getter then setter)."""
    if "." not in part:
        return _source(reference_function(part))
    class_name, name = part.split(".")
    functions = reference_attribute_functions(class_name, name)
    if not functions:
        raise LookupError(f"the reference's {part} is not a function or property")
    return "\n".join(dict.fromkeys(_source(f) for f in functions))


def reference_attribute_functions(class_name: str, name: str) -> list[types.FunctionType]:
    """The functions of attribute ``name`` of the first reference class ``class_name`` that
    has it as one: 09's ``Module.__setattr__`` is on notebook 09's ``Module`` only, while 01's
    ``Module.named_parameters`` is found on 01's first."""
    for module in reference_modules():
        found = getattr(module, class_name, None)
        if isinstance(found, type):
            functions = functions_of(inspect.getattr_static(found, name, None))
            if functions:
                return functions
    return []


def reference_sources(parts: Iterable[str]) -> dict[str, str]:
    """``part -> source`` for each part (read from the reference engine, which must be here)."""
    return {part: part_source(part) for part in parts}


def _compiled(source: str, part: str) -> types.CodeType:
    """``source`` compiled with lazy annotations (they name notebook classes, which may not
    exist yet, as ``def run_backward(root: Tensor)``)."""
    flags = __future__.annotations.compiler_flag
    return compile(source, f"<reference {part}>", "exec", flags=flags, dont_inherit=True)


def compile_part(part: str, source: str, namespace: dict[str, Any]) -> Any:
    """The object ``source`` defines for ``part``: a function, or a class attribute compiled
    in a class body (so a zero-argument ``super()`` has its cell); decorators see the
    notebook's names. A part that is an alias (``__radd__ = __add__``) is its def's object."""
    if type(part) is not str or type(source) is not str:
        raise TypeError("a lent part and its source must be strings")
    defined = [node.name for node in ast.parse(source).body if isinstance(node, ast.FunctionDef)]
    if not defined:
        raise ValueError(f"the source lent for {part} defines no function")
    scratch = dict(namespace)
    name = part.split(".")[-1]
    found = name if name in defined else defined[-1]
    if "." not in part:
        exec(_compiled(source, part), scratch)
        return scratch[found]
    exec(_compiled(f"class _Lent:\n{textwrap.indent(source, '    ')}\n", part), scratch)
    return scratch["_Lent"].__dict__[found]


@contextmanager
def lent(namespace: dict[str, Any], sources: dict[str, str]) -> Iterator[None]:
    """Inside the block, each part in ``sources`` that the notebook has (its function, or its
    class) is the one compiled from its source; the notebook's own restored after."""
    with ExitStack() as stack:
        methods: dict[type, dict[str, str]] = {}
        functions: dict[str, str] = {}
        for part, source in sources.items():
            owner = part.split(".")[0]
            if owner not in namespace:
                continue  # a cell not run yet (below this check): nothing to stand in for
            if "." in part:
                methods.setdefault(namespace[owner], {})[part.split(".")[1]] = source
            else:
                functions[part] = source
        stack.enter_context(lent_functions(namespace, functions))
        for cls, sources_of_cls in methods.items():
            stack.enter_context(lent_methods(cls, sources_of_cls))
        yield


@contextmanager
def lent_methods(cls: type, sources: dict[str, str]) -> Iterator[None]:
    """Inside the block, ``cls``'s methods named in ``sources`` are compiled from them."""
    namespace = notebook_namespace(cls)
    own = {name: cls.__dict__[name] for name in sources if name in cls.__dict__}
    try:
        for name, source in sources.items():
            value = compile_part(f"{cls.__name__}.{name}", source, namespace)
            setattr(cls, name, rebind(value, namespace, cls))
        yield
    finally:
        for name in sources:
            if name in own:
                setattr(cls, name, own[name])
            elif name in cls.__dict__:
                delattr(cls, name)


@contextmanager
def lent_functions(namespace: dict[str, Any], sources: dict[str, str]) -> Iterator[None]:
    """Inside the block, the notebook's functions named in ``sources`` are compiled from them."""
    own = {name: namespace[name] for name in sources if name in namespace}
    try:
        for name, source in sources.items():
            namespace[name] = rebind(compile_part(name, source, namespace), namespace, object)
        yield
    finally:
        for name in sources:
            if name in own:
                namespace[name] = own[name]
            else:
                namespace.pop(name, None)


# This module as the student's kernel imports it (asked from the trusted kernel).
HERE_IN_STUDENT_KERNEL = "__import__('autograder.checks.given', fromlist=['_'])"


@contextmanager
def reference_methods(cls: type, *names: str) -> Iterator[None]:
    """Inside the block, ``cls``'s methods ``names`` are the reference engine's; restored after.

    In the student kit they stay the student's own (``prerequisites.own_parts``)."""
    if kit_mode():
        with reference_parts({cls: names}):
            yield
        return
    sources = {name: part_source(f"{cls.__name__}.{name}") for name in names}
    if in_trusted_kernel():
        expression = f"{HERE_IN_STUDENT_KERNEL}.lent_methods(cls, sources)"
        with lending([f"{cls.__name__}.{name}" for name in names]):
            with in_student_kernel(expression, cls=cls, sources=sources):
                yield
        return
    with lent_methods(cls, sources):
        yield


@contextmanager
def reference_parts(parts: dict[type, tuple[str, ...]]) -> Iterator[None]:
    """``reference_methods`` for several classes at once: ``{Tensor: ("add_",), ...}``."""
    if kit_mode():  # one watch over every part: nested ones would hide each other's calls
        owners = {cls.__name__: cls for cls in parts}
        named = {f"{cls.__name__}.{name}": None for cls, names in parts.items() for name in names}
        with own_parts(owners, named):
            yield
        return
    with ExitStack() as stack:
        for cls, names in parts.items():
            stack.enter_context(reference_methods(cls, *names))
        yield


def reference_function(name: str) -> types.FunctionType:
    """The reference engine's module-level function called ``name``."""
    for module in reference_modules():
        found = getattr(module, name, None)
        if isinstance(found, types.FunctionType):
            return found
    raise LookupError(f"the reference engine has no function {name!r}")


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


# What each exercise (solution cell) of a notebook defines, from the course's catalogue.
EXERCISE_PARTS: dict[str, dict[str, tuple[str, ...]]] = {
    notebook: parts_by_exercise(notebook)
    for notebook in dict.fromkeys(exercise.notebook for exercise in CATALOGUE)
}


class Exercises:
    """A notebook's exercises, to check one of them with the reference for all the others."""

    def __init__(self, notebook: str, namespace: dict[str, Any]) -> None:
        if notebook not in EXERCISE_PARTS:
            raise KeyError(f"no exercises declared for notebook {notebook!r}")
        self.notebook = notebook
        self.parts = EXERCISE_PARTS[notebook]
        self.namespace = namespace

    @contextmanager
    def alone(self, *checked: str) -> Iterator[None]:
        """Inside the block, every part of the notebook is the reference's except ``checked``.

        ``checked`` names exercises (solution cells) or single parts (``"Context.release"``).
        So the block checks those alone: a correct answer passes whatever state the
        notebook's other exercises are in (written, unwritten or wrong). Only the other
        parts' sources are lent, never a checked part's.
        """
        every_part = [part for parts in self.parts.values() for part in parts]
        unknown = [name for name in checked if name not in self.parts and name not in every_part]
        if unknown:
            raise KeyError(f"no exercise or part {unknown}; exercises: {sorted(self.parts)}")
        kept = {part for name in checked for part in self.parts.get(name, (name,))}
        others = [part for part in every_part if part not in kept]
        if kit_mode():
            exercise = {part: name for name, parts in self.parts.items() for part in parts}
            with own_parts(self.namespace, {part: exercise[part] for part in others}):
                yield
            return
        sources = reference_sources(others)
        if in_trusted_kernel():
            expression = f"{HERE_IN_STUDENT_KERNEL}.lent(get_ipython().user_ns, sources)"
            functions = [part for part in others if "." not in part]
            with lending(others, kept), in_student_kernel(expression, sources=sources):
                with current_student_functions(self.namespace, functions):
                    yield
            return
        with lent(self.namespace, sources):
            yield
