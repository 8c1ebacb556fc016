"""08's mistakes that its visible checks must catch."""

from visible_checks import WrongAnswer

A = "08-capstone"

CLIP = "clip_grad_norm_(model.parameters(), max_norm)"
LOOP = (
    "for layer in self.layers[:-1]:\n"
    "            x = layer(x).tanh()\n"
    "        return self.layers[-1](x)"
)
THREE = (
    "x = self.layers[0](x).tanh()\n"
    "        x = self.layers[1](x).tanh()\n"
    "        return self.layers[2](x)"
)

WRONG = [
    WrongAnswer(
        "MLP.forward hard-coded for three layers",
        A,
        "mlp",
        LOOP,
        THREE,
        "test_mlp_and_step",
        "forward must run every layer in self.layers",
    ),
    WrongAnswer(
        "train_step never clips the gradients",
        A,
        "train_step",
        CLIP,
        "pass",
        "test_training_matches_torch",
        "your update used them unclipped: call clip_grad_norm_",
    ),
    WrongAnswer(
        "train_step clips after optimizer.step()",
        A,
        "train_step",
        f"{CLIP}\n    optimizer.step()",
        f"optimizer.step()\n    {CLIP}",
        "test_training_matches_torch",
        "before optimizer.step(), not after",
    ),
    WrongAnswer(
        "train_step clips with a fixed max_norm of 2.0",
        A,
        "train_step",
        CLIP,
        CLIP.replace("max_norm", "2.0"),
        "test_training_matches_torch",
        "with the max_norm that train_step is given",
    ),
    WrongAnswer(
        "train_step clips with half its max_norm",
        A,
        "train_step",
        CLIP,
        CLIP.replace("max_norm", "max_norm / 2"),
        "test_training_matches_torch",
        "clip with the max_norm that train_step is given",
    ),
    WrongAnswer(
        "train_step returns the loss tensor, not loss.item()",
        A,
        "train_step",
        "return loss.item()",
        "return loss",
        "test_training_matches_torch",
        "train_step must return loss.item(), a Python float; it returned a Tensor",
    ),
    WrongAnswer(
        "train_step never clears the gradients",
        A,
        "train_step",
        "optimizer.zero_grad(set_to_none=True)",
        "pass",
        "test_training_matches_torch",
        "clear the gradients first (optimizer.zero_grad)",
    ),
]
