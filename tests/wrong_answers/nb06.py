"""06's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "06-alternatives"

WRONG = [
    WrongAnswer(
        "grad ignores its argument index: always the first argument's gradient",
        A,
        "functional_grad",
        "requires_grad=i == argnums) for i, a in enumerate(arrays)]\n"
        "        f(*tensors).backward()\n"
        "        return tensors[argnums].grad",
        "requires_grad=i == 0) for i, a in enumerate(arrays)]\n"
        "        f(*tensors).backward()\n"
        "        return tensors[0].grad",
        "test_functional_grad",
        "the gradient with respect to b",
    ),
    WrongAnswer(
        "per_sample_grads_loop drops extra samples instead of raising ValueError",
        A,
        "per_sample",
        "zip(xs, ys, strict=True)",
        "zip(xs, ys)",
        "test_per_sample",
        "raises ValueError",
    ),
]
