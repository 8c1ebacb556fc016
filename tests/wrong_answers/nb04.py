"""04's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "04-custom-functions"

CONVERT = """        if grad is not None and not isinstance(grad, Tensor):
            grad = np.asarray(grad)
"""
CENTRAL = """x[element] = original - eps
            minus = fn(*inputs).data.reshape(-1).copy()
            x[element] = original
            jacobian[k] = (plus - minus) / (2 * eps)"""
ONE_SIDED = """x[element] = original
            minus = fn(*inputs).data.reshape(-1).copy()
            jacobian[k] = (plus - minus) / eps"""

WRONG = [
    WrongAnswer(
        "validate_gradients sums only prepended dimensions, never a size-1 one",
        A,
        "validate_gradients",
        "grad = unbroadcast(grad, tensor.shape)",
        "grad = grad.sum(axis=tuple(range(grad.ndim - tensor.ndim)))",
        "test_validate_gradients",
        "size-1",
    ),
    WrongAnswer(
        "validate_gradients crashes on a None gradient",
        A,
        "validate_gradients",
        "if grad is not None and grad.shape != tensor.shape:",
        "if grad.shape != tensor.shape:",
        "test_validate_gradients",
        "returns None",
    ),
    WrongAnswer(
        "validate_gradients does not read a list or a number as an array",
        A,
        "validate_gradients",
        CONVERT,
        "",
        "test_validate_gradients",
        "Python list",
    ),
    WrongAnswer(
        "MyReLU zeroes the gradient at exactly 0 too (input <= 0)",
        A,
        "my_relu",
        "grad_input[input < 0] = 0",
        "grad_input[input <= 0] = 0",
        "test_my_relu",
        "exactly 0",
    ),
    WrongAnswer(
        "numerical_jacobian takes a one-sided difference",
        A,
        "gradcheck",
        CENTRAL,
        ONE_SIDED,
        "test_gradcheck",
        "central",
    ),
    WrongAnswer(
        "numerical_jacobian keeps a view of the output, which the next perturbation changes",
        A,
        "gradcheck",
        "plus = fn(*inputs).data.reshape(-1).copy()",
        "plus = fn(*inputs).data.reshape(-1)",
        "test_gradcheck",
        "copy",
    ),
]
