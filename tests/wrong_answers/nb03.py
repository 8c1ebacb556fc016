"""03's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "03-gradient-controls"

REQUIRES_GRAD_RETURN = "        self.requires_grad = requires_grad\n        return self"
INFERENCE_ERROR = (
    "        if requires_grad and self.is_inference() and not is_inference_mode_enabled():\n"
    "            raise RuntimeError(\n"
    '                "Setting requires_grad=True on inference tensor outside '
    'InferenceMode is not "\n'
    '                "allowed."\n'
    "            )\n"
)

WRONG = [
    WrongAnswer(
        "the @no_grad() decorator loses the function's name (no functools.wraps)",
        A,
        "no_grad",
        "@functools.wraps(function)\n        def wrapper",
        "def wrapper",
        "test_no_grad_modes",
        "functools.wraps",
    ),
    WrongAnswer(
        "the decorator enters one reused instance (with self:), not a fresh mode per call",
        A,
        "no_grad",
        "with type(self)():",
        "with self:",
        "test_no_grad_modes",
        "fresh",
    ),
    WrongAnswer(
        "inference_mode.__exit__ restores nothing",
        A,
        "grad_modes",
        "_grad_enabled, _inference_mode = self._previous",
        "pass",
        "test_inference_mode",
        "inference_mode.__exit__",
    ),
    WrongAnswer(
        "inference_mode.__exit__ switches the defaults back on, not the previous state",
        A,
        "grad_modes",
        "_grad_enabled, _inference_mode = self._previous",
        "_grad_enabled, _inference_mode = True, False",
        "test_inference_mode",
        "inference_mode.__exit__",
    ),
    WrongAnswer(
        "inference_mode.__exit__ restores the grad flag only",
        A,
        "grad_modes",
        "_grad_enabled, _inference_mode = self._previous",
        "_grad_enabled = self._previous[0]",
        "test_inference_mode",
        "inference_mode.__exit__",
    ),
    WrongAnswer(
        "requires_grad_() lets an inference tensor require grad outside inference_mode",
        A,
        "tensor",
        INFERENCE_ERROR,
        "",
        "test_requires_grad",
        "inference tensor outside",
    ),
    WrongAnswer(
        "requires_grad_() returns None, not the tensor",
        A,
        "tensor",
        REQUIRES_GRAD_RETURN,
        "        self.requires_grad = requires_grad",
        "test_requires_grad",
        "return the tensor itself",
    ),
    WrongAnswer(
        "detach() drops the inference flag (torch: detach of an inference tensor is one)",
        A,
        "tensor",
        "        detached = Tensor(self.data)\n"
        "        detached._inference = self._inference"
        "  # torch: detach of an inference tensor is one too\n"
        "        return detached",
        "        return Tensor(self.data)",
        "test_detach",
        "is_inference",
    ),
]
