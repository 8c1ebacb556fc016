"""07's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "07-faq"

WRONG = [
    WrongAnswer(
        "clip_grad_norm_ ignores norm_type (always the 2-norm, but for inf)",
        A,
        "clip_grad_norm",
        "per_tensor = [np.linalg.norm(g.reshape(-1), norm_type) for g in grads]\n"
        "        total = np.linalg.norm(np.array(per_tensor), norm_type)",
        "per_tensor = [np.linalg.norm(g.reshape(-1)) for g in grads]\n"
        "        total = np.linalg.norm(np.array(per_tensor))",
        "test_clip_grad_norm",
        "norm_type=1.0) (the 1-norm",
    ),
    WrongAnswer(
        "clip_grad_norm_ never caps the scale at 1: it scales small gradients up",
        A,
        "clip_grad_norm",
        "scale = min(max_norm / (total + 1e-6), 1.0)",
        "scale = max_norm / (total + 1e-6)",
        "test_clip_grad_norm",
        "torch caps the scale at 1",
    ),
    WrongAnswer(
        "hvp returns x instead of f(x) as the first of its pair",
        A,
        "hvp",
        "return out.data, x_tensor.grad",
        "return x_tensor.data, x_tensor.grad",
        "test_hvp",
        "the value f(x)",
    ),
]
