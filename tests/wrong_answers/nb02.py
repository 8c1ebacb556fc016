"""02's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "02-how-it-works"

WRONG = [
    WrongAnswer(
        "Context.release marks the context freed but keeps the saved arrays",
        A,
        "function",
        "        self._saved = ()\n        self.freed = True",
        "        self.freed = True",
        "test_release",
        "must drop the saved arrays",
    ),
    WrongAnswer(
        "retain_grad() sets retains_grad on a leaf too",
        A,
        "tensor",
        "        if self.grad_fn is not None:  # a leaf keeps its gradient anyway\n"
        "            self.retains_grad = True",
        "        self.retains_grad = True",
        "test_retain_grad",
        "a leaf after retain_grad()",
    ),
    WrongAnswer(
        "release_graph does not stop at contexts already freed",
        A,
        "backward",
        "if ctx is not None and not ctx.freed:",
        "if ctx is not None:",
        "test_free_graph",
        "already freed",
    ),
]
