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
