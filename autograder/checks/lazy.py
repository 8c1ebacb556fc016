"""Names a package loads from their modules the first time they are asked for (PEP 562):
``import autograder`` stays light, and a notebook's ``from autograder import ...`` gets the
real helper."""

from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(
    package: str, names: dict[str, str], namespace: dict[str, Any]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The package's ``__getattr__`` (a name of ``names`` imported from its module and kept
    in ``namespace``) and ``__dir__`` (those names too, for tab completion)."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(names[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
