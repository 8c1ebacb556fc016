"""01's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "01-worked-example"

WRONG = [
    WrongAnswer(
        "backward overwrites .grad instead of adding to it",
        A,
        "backward",
        "tensor.grad = grad.copy() if tensor.grad is None else tensor.grad + grad",
        "tensor.grad = grad.copy()",
        "test_backward",
        "accumulate",
    ),
    WrongAnswer(
        "backward stores a leaf's gradient without a copy, so two leaves share one array",
        A,
        "backward",
        "tensor.grad = grad.copy() if tensor.grad is None else tensor.grad + grad",
        "tensor.grad = grad if tensor.grad is None else tensor.grad + grad",
        "test_backward",
        "its own copy",
    ),
    WrongAnswer(
        "Pow's backward uses n * x**(n - 1) for n = 0 too: NaN at x = 0",
        A,
        "elementwise",
        "        if ctx.exponent == 0:"
        "  # x**0 is constant: torch gives 0, also at x = 0 (not 0 * inf)\n"
        "            return (np.zeros(a.shape, dtype=a.dtype),)\n",
        "",
        "test_elementwise",
        "grad of x**0",
    ),
    WrongAnswer(
        "MatMul's backward handles 2-D matrices only (no 1-D operand, no batch)",
        A,
        "matmul",
        "        # View vectors as matrices (a row for a, a column for b), as matmul does.\n",
        "        return grad @ b.T, a.T @ grad  # 2-D matrices only\n",
        "test_matmul",
        "1-D operand",
    ),
    WrongAnswer(
        "MatMul's backward never unbroadcasts: a matrix used by a whole batch fails",
        A,
        "matmul",
        "            grad_b = unbroadcast(grad_b, b2.shape).reshape(b.shape)",
        "            grad_b = grad_b.reshape(b.shape)",
        "test_matmul",
        "unbroadcast",
    ),
    WrongAnswer(
        "named_parameters lists tensors that need no grad",
        A,
        "module",
        "if isinstance(value, Tensor) and value.requires_grad:",
        "if isinstance(value, Tensor):",
        "test_linear",
        "only tensors that require grad",
    ),
    WrongAnswer(
        "zero_grad does nothing",
        A,
        "module",
        "    for parameter in parameters:\n"
        "        if set_to_none:\n"
        "            parameter.grad = None\n"
        "        elif parameter.grad is not None:\n"
        "            parameter.grad = np.zeros_like(parameter.grad)\n",
        "    pass\n",
        "test_linear",
        "zero_grad()",
    ),
    WrongAnswer(
        "zero_grad(set_to_none=False) sets .grad to None instead of zeros",
        A,
        "module",
        "        if set_to_none:\n            parameter.grad = None\n",
        "        if True:\n            parameter.grad = None\n",
        "test_linear",
        "zero_grad(set_to_none=False)",
    ),
]
