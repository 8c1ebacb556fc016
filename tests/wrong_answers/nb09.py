"""09's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "09-mixed-precision"

REFUSE_TENSOR = """        elif name in parameters:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(Parameter or None expected)"
                )
            parameters[name] = None"""

WRONG = [
    WrongAnswer(
        "named_modules starts a new memo in each submodule",
        A,
        "parameter",
        "yield from module.named_modules(memo, ",
        "yield from module.named_modules(set(), ",
        "test_parameters",
        "a module met twice is yielded once",
    ),
    WrongAnswer(
        "a plain tensor silently replaces a registered Parameter",
        A,
        "parameter",
        REFUSE_TENSOR,
        "        elif name in parameters:\n            parameters[name] = value",
        "test_parameters",
        "torch raises TypeError",
    ),
    WrongAnswer(
        "inf and NaN looked for after unscaling",
        A,
        "loss_scaler",
        "if not np.isfinite(parameter.grad).all():\n"
        "                    self._found_inf = True\n"
        "                parameter.grad *= inv_scale",
        "parameter.grad *= inv_scale\n"
        "                if not np.isfinite(parameter.grad).all():\n"
        "                    self._found_inf = True",
        "test_loss_scaler",
        "looked for before unscaling",
    ),
    WrongAnswer(
        "the scale grows to inf",
        A,
        "loss_scaler",
        "if np.isfinite(grown):  # a scale that would overflow float32 stays\n"
        "                    self._scale = grown",
        "self._scale = grown",
        "test_loss_scaler",
        "a scale that would grow to inf stays as it is",
    ),
    WrongAnswer(
        "step() twice is not refused",
        A,
        "loss_scaler",
        'if self._stage == "stepped":\n'
        '            raise RuntimeError("step() has already been called since the last update().")',
        "pass",
        "test_loss_scaler",
        "'step twice before update': torch raises RuntimeError",
    ),
    WrongAnswer(
        "unscale_() after step() is not refused",
        A,
        "loss_scaler",
        'if self._stage == "stepped":\n'
        '            raise RuntimeError("unscale_() is being called after step().")',
        "pass",
        "test_loss_scaler",
        "'unscale_ after step': torch raises RuntimeError",
    ),
    WrongAnswer(
        "update() with nothing recorded is not refused",
        A,
        "loss_scaler",
        'if self._stage == "ready":\n'
        '            raise AssertionError("No inf checks were recorded prior to update.")',
        "pass",
        "test_loss_scaler",
        "'update before any step': torch raises AssertionError",
    ),
]
