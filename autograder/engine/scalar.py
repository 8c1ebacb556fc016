"""The smallest engine that reproduces the recipe: scalars, ``+``, ``*``, ``**`` and backward.

Notebook 00 builds it. Every operation stores its inputs and the local derivative of its
output with respect to each input; ``backward`` walks the graph from the output to the
leaves and applies the chain rule.
"""

from autograder.engine.grad_mode import is_grad_enabled


# %% chunk: scalar
class Scalar:
    """A number that remembers how it was computed, so it can send gradients back."""

    def __init__(self, data: float, requires_grad: bool = False) -> None:
        self.data = float(data)
        self.requires_grad = requires_grad
        self.grad: float | None = None
        # (input, local derivative d self / d input) for each input; empty for a leaf.
        self.parents: tuple[tuple[Scalar, float], ...] = ()

    @property
    def is_leaf(self) -> bool:
        return not self.parents

    def __repr__(self) -> str:
        return f"Scalar({self.data}, requires_grad={self.requires_grad})"

    @staticmethod
    def _from_op(value: float, parents: list[tuple["Scalar", float]]) -> "Scalar":
        """Result of an operation: it records its parents only while grad mode is on."""
        tracked = [(p, d) for p, d in parents if p.requires_grad]
        out = Scalar(value, requires_grad=bool(tracked) and is_grad_enabled())
        if out.requires_grad:
            out.parents = tuple(tracked)
        return out

    def __add__(self, other: "Scalar | float") -> "Scalar":
        other = other if isinstance(other, Scalar) else Scalar(other)
        ### BEGIN SOLUTION
        return Scalar._from_op(self.data + other.data, [(self, 1.0), (other, 1.0)])
        ### END SOLUTION

    def __mul__(self, other: "Scalar | float") -> "Scalar":
        other = other if isinstance(other, Scalar) else Scalar(other)
        ### BEGIN SOLUTION
        return Scalar._from_op(self.data * other.data, [(self, other.data), (other, self.data)])
        ### END SOLUTION

    def __pow__(self, exponent: float) -> "Scalar":
        ### BEGIN SOLUTION
        derivative = exponent * self.data ** (exponent - 1)
        return Scalar._from_op(self.data**exponent, [(self, derivative)])
        ### END SOLUTION

    __radd__ = __add__
    __rmul__ = __mul__

    def backward(self) -> None:
        """Accumulate d self / d leaf into ``leaf.grad`` for every leaf that requires grad."""
        if not self.requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn"
            )
        ### BEGIN SOLUTION
        # Order the graph so that every node comes after all the nodes that use it.
        order: list[Scalar] = []
        visited: set[int] = set()
        stack: list[tuple[Scalar, bool]] = [(self, False)]
        while stack:
            node, children_done = stack.pop()
            if children_done:
                order.append(node)
            elif id(node) not in visited:
                visited.add(id(node))
                stack.append((node, True))
                stack.extend((parent, False) for parent, _ in node.parents)
        # Walk from the output back to the leaves: a node's gradient is complete
        # before it is passed on, because all its users came earlier in this walk.
        grads = {id(self): 1.0}
        for node in reversed(order):
            grad = grads.pop(id(node), 0.0)
            if node.is_leaf:
                node.grad = grad if node.grad is None else node.grad + grad
            for parent, derivative in node.parents:
                grads[id(parent)] = grads.get(id(parent), 0.0) + grad * derivative
        ### END SOLUTION
