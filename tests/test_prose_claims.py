"""Is what the notebooks' prose states about torch true in torch? Each claim is tried in
torch here, and held to the sentence of both editions that states it (a reworded sentence
has its check reworded with it)."""

import nbformat
import pytest
import torch

from autograder.grading.authoring.i18n.edition import editions
from autograder.grading.course.repo_paths import notebook_path


def prose(assignment: str) -> dict[str, str]:
    """Each edition's markdown of ``assignment``, as one text."""
    texts = {}
    for each in editions():
        notebook = nbformat.read(notebook_path(each.solutions, assignment), as_version=4)
        texts[each.language] = "\n".join(
            c.source for c in notebook.cells if c.cell_type == "markdown"
        )
    return texts


def flat(text: str) -> str:
    return " ".join(text.split())


def test_07_an_inference_tensor_trains_in_a_sum_and_cannot_be_saved_for_backward():
    with torch.inference_mode():
        t = torch.ones(3)
    x = torch.ones(3, requires_grad=True)
    (x + t).sum().backward()
    assert torch.equal(x.grad, torch.ones(3))
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (x * t).sum().backward()
    said = prose("07-faq")
    assert "`x + t` with an inference tensor `t` still trains, but `x * t` raises" in flat(
        said["en"]
    )
    assert "`x + t` con un tensor de inferencia `t` sigue entrenando, pero `x * t` lanza" in flat(
        said["es"]
    )


def test_09_float16_rounds_half_its_smallest_number_to_zero_and_just_above_up():
    smallest = 2.0**-24
    as_half = lambda value: torch.tensor(value, dtype=torch.float16).item()  # noqa: E731
    assert as_half(smallest) == smallest
    assert as_half(smallest / 2) == 0.0  # 2**-25: a tie, rounded to the even zero
    assert as_half(smallest / 2 * 1.001) == smallest
    said = prose("09-mixed-precision")
    assert "a value at or below half of it, $2^{-25}$, rounds to zero" in flat(said["en"])
    assert "un valor igual o menor que su mitad, $2^{-25}$, se redondea a cero" in flat(said["es"])


def test_02_next_functions_numbers_the_output_of_the_node_an_input_came_from():
    a = torch.ones(4, requires_grad=True)
    first, second = a.split(2)  # one node, two outputs
    node = (second * 2).sum().grad_fn.next_functions[0][0]  # MulBackward0
    (split, index), _ = node.next_functions
    assert split.name().startswith("Split") and index == 1  # the node's second output
    said = prose("02-how-it-works")
    assert "the number is which output of that node the input was" in flat(said["en"])
    assert "el número dice qué salida de ese nodo era la entrada" in flat(said["es"])


def test_07_the_joint_norm_is_not_one_long_vectors_for_norm_type_0():
    first, second = torch.nn.Parameter(torch.zeros(3)), torch.nn.Parameter(torch.zeros(2))
    first.grad = torch.tensor([1.0, 1.0, 0.0])  # 2 nonzeros
    second.grad = torch.tensor([3.0, 0.0])  # 1 nonzero
    joint = torch.nn.utils.clip_grad_norm_([first, second], 100.0, norm_type=0)
    assert joint.item() == 2.0  # the count of nonzero per-tensor counts, not 3
    everything = torch.cat([first.grad, second.grad])
    assert torch.linalg.vector_norm(everything, 0).item() == 3.0
    for p in (1.0, 2.0, 3.5, float("inf")):  # for these, the same as one long vector
        joint = torch.nn.utils.clip_grad_norm_([first, second], 1e9, norm_type=p)
        assert torch.isclose(joint, torch.linalg.vector_norm(everything, p))
    said = prose("07-faq")
    assert "gradients with 2 and 1 nonzeros give 2, not 3" in flat(said["en"])
    assert "uno con 2 valores no nulos y otro con uno, dan 2, no 3" in flat(said["es"])


def test_03_the_requires_grad_check_covers_the_three_errors_as_the_text_says():
    from autograder.checks.hidden_tests import split_hidden_tests
    from autograder.grading.course.repo_paths import SOLUTIONS_DIR

    notebook = nbformat.read(notebook_path(SOLUTIONS_DIR, "03-gradient-controls"), as_version=4)
    [cell] = [
        c
        for c in notebook.cells
        if c.metadata.get("nbgrader", {}).get("grade_id") == "test_requires_grad"
    ]
    visible, _ = split_hidden_tests(cell.source)
    for error in ("leaf variables", "floating point", "inference tensor outside InferenceMode"):
        assert f'match="{error}"' in visible, error
    said = prose("03-gradient-controls")
    assert "The `requires_grad_` check below covers all three errors" in flat(said["en"])
    assert "La comprobación de `requires_grad_` de más abajo cubre los tres errores" in flat(
        said["es"]
    )


def test_03_two_backward_calls_add_up_from_no_gradient_in_the_demo_cell():
    """The demo prints a.grad after two backward calls of sum(a * a): 2a twice, [4, 8], with
    the gradient of the detach demo above it cleared first."""
    notebook = nbformat.read(
        notebook_path(editions()[0].solutions, "03-gradient-controls"), as_version=4
    )
    [cell] = [c for c in notebook.cells if c.get("id") == "code-07"]
    namespace = {"torch": torch, "print": lambda *args: None}
    exec(cell.source, namespace)
    assert namespace["a"].grad.tolist() == [4.0, 8.0]


def test_06_n_is_the_size_of_y_only_when_y_has_the_predictions_shape():
    import numpy as np

    prediction = torch.tensor([[0.5], [1.5], [-1.0]], requires_grad=True)
    same = torch.tensor([[1.0], [1.0], [0.0]])
    torch.nn.functional.mse_loss(prediction, same).backward()
    by_text = 2 * (prediction.detach() - same) / same.numel()
    assert torch.allclose(prediction.grad, by_text)
    prediction.grad = None
    flat_y = same.reshape(-1)  # (3,) against (3, 1): broadcasts to (3, 3)
    ((prediction - flat_y) ** 2).mean().backward()
    difference = prediction.detach() - flat_y
    summed = (2 * difference / difference.numel()).sum(axis=1, keepdims=True)
    assert torch.allclose(prediction.grad, summed)
    assert not np.allclose(prediction.grad, 2 * difference.sum(1, keepdim=True) / flat_y.numel())
    said = prose("06-alternatives")
    assert "`y` has the prediction's shape here" in flat(said["en"])
    assert "aquí `y` tiene la forma de la predicción" in flat(said["es"])
