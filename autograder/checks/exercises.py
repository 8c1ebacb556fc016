"""The course's exercises, declared once: each notebook's solution cells, the parts each one
defines (functions and ``Class.method``: what a check keeps or lends) and the test cells that
check it.

The checks read it (``given.Exercises``: one exercise checked with the reference for the
others), and so do the independence test, the demo cohort's planted bugs and the mutation
tool's hand-written mistakes; ``tests/checks/test_exercises.py`` holds it to the solution notebooks
(docs/development.md, "Adding an exercise"). No answer is here: names only.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Exercise:
    """One solution cell of a notebook: what it defines and which test cells check it."""

    notebook: str
    cell: str  # nbgrader grade_id of the solution cell
    parts: tuple[str, ...]  # "function" or "Class.method", each holding a solution region
    tests: tuple[str, ...]  # grade_ids of the test cells that check it


CATALOGUE: tuple[Exercise, ...] = (
    Exercise(
        "00-recipe",
        "scalar",
        ("Scalar.__add__", "Scalar.__mul__", "Scalar.__pow__", "Scalar.backward"),
        ("test_recipe", "test_scalar_ops"),
    ),
    Exercise("00-recipe", "no_grad", ("no_grad.__enter__", "no_grad.__exit__"), ("test_no_grad",)),
    Exercise("01-worked-example", "unbroadcast", ("unbroadcast",), ("test_unbroadcast",)),
    Exercise("01-worked-example", "backward", ("run_backward",), ("test_backward",)),
    Exercise("01-worked-example", "mul_div", ("Mul.backward", "Div.backward"), ("test_mul_div",)),
    Exercise(
        "01-worked-example",
        "elementwise",
        (
            "Pow.backward",
            "Exp.backward",
            "Log.backward",
            "Tanh.backward",
            "ReLU.backward",
            "Sigmoid.backward",
        ),
        ("test_elementwise",),
    ),
    Exercise("01-worked-example", "matmul", ("MatMul.backward",), ("test_matmul",)),
    Exercise(
        "01-worked-example",
        "reductions",
        ("Sum.backward", "Mean.backward"),
        ("test_reductions", "test_worked_example"),
    ),
    Exercise(
        "01-worked-example",
        "module",
        ("clear_grads", "Module.named_parameters", "Linear.forward", "mse_loss"),
        ("test_linear",),
    ),
    Exercise(
        "02-how-it-works",
        "function",
        ("Context.release", "Context.next_functions"),
        ("test_next_functions", "test_release"),
    ),
    Exercise(
        "02-how-it-works",
        "tensor",
        ("Tensor.retain_grad", "Tensor.keeps_grad"),
        ("test_retain_grad",),
    ),
    Exercise("02-how-it-works", "graph_nodes", ("graph_node",), ("test_graph_structure",)),
    Exercise("02-how-it-works", "backward", ("release_graph",), ("test_free_graph",)),
    Exercise("03-gradient-controls", "no_grad", ("no_grad.__call__",), ("test_no_grad_modes",)),
    Exercise(
        "03-gradient-controls",
        "grad_modes",
        ("enable_grad.__enter__", "inference_mode.__enter__", "inference_mode.__exit__"),
        ("test_inference_mode",),
    ),
    Exercise(
        "03-gradient-controls",
        "tensor",
        ("Tensor.requires_grad_", "Tensor.detach"),
        ("test_detach", "test_requires_grad", "test_retain_graph"),
    ),
    Exercise(
        "04-custom-functions",
        "validate_gradients",
        ("validate_gradients",),
        ("test_validate_gradients",),
    ),
    Exercise(
        "04-custom-functions", "my_relu", ("MyReLU.forward", "MyReLU.backward"), ("test_my_relu",)
    ),
    Exercise(
        "04-custom-functions",
        "gradcheck",
        ("numerical_jacobian", "analytical_jacobian", "gradcheck"),
        ("test_gradcheck",),
    ),
    Exercise(
        "05-common-pitfalls", "function", ("Context.check_versions",), ("test_saved_versions",)
    ),
    Exercise(
        "05-common-pitfalls",
        "tensor",
        ("Tensor.numpy", "Tensor.add_", "Tensor.mul_"),
        ("test_inplace", "test_numpy_sharing"),
    ),
    Exercise("05-common-pitfalls", "sgd", ("SGD.step",), ("test_sgd_zero_grad",)),
    Exercise("05-common-pitfalls", "loss_history", ("train_and_record",), ("test_loss_history",)),
    Exercise("06-alternatives", "functional_grad", ("grad",), ("test_functional_grad",)),
    Exercise(
        "06-alternatives",
        "per_sample",
        ("per_sample_grads_loop", "per_sample_grads_linear"),
        ("test_per_sample",),
    ),
    Exercise("06-alternatives", "manual_mlp", ("manual_mlp_grads",), ("test_manual_mlp",)),
    Exercise("07-faq", "vjp", ("vjp", "jacobian"), ("test_jacobian", "test_vjp")),
    Exercise("07-faq", "gradient_flow", ("parameters_without_grad",), ("test_gradient_flow",)),
    Exercise("07-faq", "clip_grad_norm", ("clip_grad_norm_",), ("test_clip_grad_norm",)),
    Exercise("07-faq", "sqrt", ("Sqrt.forward", "Sqrt.backward"), ("test_sqrt",)),
    Exercise("07-faq", "hvp", ("hvp",), ("test_hvp",)),
    Exercise("07-faq", "transfer_step", ("transfer_step",), ("test_transfer_step",)),
    Exercise("08-capstone", "mlp", ("MLP.forward",), ("test_mlp_and_step",)),
    Exercise("08-capstone", "train_step", ("train_step",), ("test_training_matches_torch",)),
    Exercise(
        "09-mixed-precision",
        "parameter",
        ("Module.__setattr__", "Module.named_modules"),
        ("test_parameters",),
    ),
    Exercise("09-mixed-precision", "cast", ("Cast.forward", "Cast.backward"), ("test_cast",)),
    Exercise("09-mixed-precision", "half_forward", ("half_forward",), ("test_half_forward",)),
    Exercise(
        "09-mixed-precision",
        "loss_scaler",
        ("LossScaler.scale", "LossScaler.unscale_", "LossScaler.step", "LossScaler.update"),
        ("test_loss_scaler",),
    ),
    Exercise("09-mixed-precision", "amp_step", ("amp_train_step",), ("test_amp_training",)),
)


def exercises_of(notebook: str) -> tuple[Exercise, ...]:
    """The exercises of ``notebook``, in the notebook's order."""
    return tuple(exercise for exercise in CATALOGUE if exercise.notebook == notebook)


def parts_by_exercise(notebook: str) -> dict[str, tuple[str, ...]]:
    """``{solution cell: its parts}`` of ``notebook`` (empty for a notebook not declared)."""
    return {exercise.cell: exercise.parts for exercise in exercises_of(notebook)}


def exercise_label(parts: tuple[str, ...]) -> str:
    """What a student writes in an exercise, in a few words: ``Tensor.requires_grad_/detach``
    for methods of one class, functions by name."""
    classes: dict[str, list[str]] = {}
    for part in parts:
        owner, _, method = part.rpartition(".")
        classes.setdefault(owner, []).append(method)
    return ", ".join(
        f"{owner}.{'/'.join(methods)}" if owner else ", ".join(methods)
        for owner, methods in classes.items()
    )


def label_by_test(notebook: str) -> dict[str, str]:
    """``{test cell: the label of the exercise it checks}`` for ``notebook``."""
    return {
        test: exercise_label(exercise.parts)
        for exercise in exercises_of(notebook)
        for test in exercise.tests
    }
