"""Grad mode: a global switch that turns graph recording off, as ``torch.no_grad`` does."""

# %% chunk: grad-switch
_grad_enabled = True


def is_grad_enabled() -> bool:
    """True when new operations record a graph (the default)."""
    return _grad_enabled


# %% chunk: no-grad
class no_grad:
    """Context manager that stops graph recording inside its block.

    It restores the previous state on exit (not simply ``True``), so blocks nest.
    """

    def __enter__(self) -> "no_grad":
        global _grad_enabled
        self._previous = _grad_enabled
        ### BEGIN SOLUTION
        _grad_enabled = False
        ### END SOLUTION
        return self

    def __exit__(self, *exc_info: object) -> None:
        global _grad_enabled
        ### BEGIN SOLUTION
        _grad_enabled = self._previous
        ### END SOLUTION
