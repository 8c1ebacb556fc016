"""The card's custom Function, ``MyReLU``, written for the engine (notebook 04)."""

from autograder.engine.tensor import Function


# %% chunk: my-relu
class MyReLU(Function):
    """ReLU as a user-defined Function: it saves its input and zeroes the gradient below 0."""

    @staticmethod
    def forward(ctx, input):
        ### BEGIN SOLUTION
        ctx.save_for_backward(input)
        return input.clip(min=0)
        ### END SOLUTION

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        (input,) = ctx.saved_tensors
        grad_input = grad_output.copy()
        grad_input[input < 0] = 0
        return grad_input
        ### END SOLUTION
