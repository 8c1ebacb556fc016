"""Grad mode: global switches that turn graph recording off, as ``torch.no_grad`` does."""

import functools

# %% chunk: grad-switch
_grad_enabled = True


def is_grad_enabled() -> bool:
    """True when new operations record a graph (the default)."""
    return _grad_enabled


# %% chunk: grad-switch from 03
_inference_mode = False


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode``: tensors made there are inference tensors."""
    return _inference_mode


# %% chunk: no-grad
class no_grad:
    """Context manager that stops graph recording inside its block.

    It restores the previous state on exit (not simply ``True``), so blocks nest.
    """

    def __enter__(self) -> "no_grad":
        global _grad_enabled
        self._previous = _grad_enabled
        ### BEGIN SOLUTION 00
        _grad_enabled = False
        ### END SOLUTION 00
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _grad_enabled
        ### BEGIN SOLUTION 00
        _grad_enabled = self._previous
        ### END SOLUTION 00


# %% chunk: no-grad from 03
class no_grad(no_grad):
    """Notebook 03: ``no_grad()`` (and the modes built on it) also decorate functions."""

    def __call__(self, function):
        """Used as a decorator, ``@no_grad()``: every call of ``function`` runs in the mode."""

        ### BEGIN SOLUTION 03
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with type(self)():
                return function(*args, **kwargs)

        return wrapper
        ### END SOLUTION 03


# %% chunk: grad-modes
class enable_grad(no_grad):
    """Turns recording back on inside its block, even within ``no_grad``."""

    def __enter__(self) -> "enable_grad":
        global _grad_enabled
        self._previous = _grad_enabled
        ### BEGIN SOLUTION
        _grad_enabled = True
        ### END SOLUTION
        return self


class inference_mode(no_grad):
    """``no_grad``, and every tensor made inside is an inference tensor: it can never be
    saved for backward later, which lets torch skip all autograd bookkeeping for it."""

    def __enter__(self) -> "inference_mode":
        global _grad_enabled, _inference_mode
        self._previous = _grad_enabled, _inference_mode
        ### BEGIN SOLUTION
        _grad_enabled, _inference_mode = False, True
        ### END SOLUTION
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _grad_enabled, _inference_mode
        ### BEGIN SOLUTION
        _grad_enabled, _inference_mode = self._previous
        ### END SOLUTION
