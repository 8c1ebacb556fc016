"""Check a computation in the student's engine against the same computation in torch.

``check_parity`` builds engine tensors and torch tensors from the same NumPy arrays, runs
the function on both, and compares the forward value and every input's gradient, on each
available torch device. A mismatch raises AssertionError with a message from
``autograder.checks.compare``; a match prints (and returns) a one-line report.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from autograder.checks.compare import compare_arrays, hint_line, student_array
from autograder.checks.devices import NOT_AVAILABLE, DeviceStatus, tf32_disabled, torch_devices
from autograder.checks.display import failure, report_pass
from autograder.checks.exact import exact_array
from autograder.checks.language import marked, tr, translated
from autograder.checks.optional_torch import torch

Shape = tuple[int, ...]

# Input dtype kinds the helper accepts: booleans, integers and floats (as torch and the
# engine both support them).
_NUMERIC_KINDS = "biuf"

# Mixed into gradient_seed so the upstream gradient never repeats a notebook's input data.
_GRADIENT_SALT = 0x6772_6164  # "grad"


@dataclass
class ParityReport:
    """What a successful ``check_parity`` compared: devices, gradient count and dtype."""

    devices_checked: list[str]
    devices_skipped: list[tuple[str, str]] = field(default_factory=list)
    n_gradients: int = 0
    dtype: str = ""

    def summary(self) -> str:
        """One line for a notebook: what matched where, and which devices were skipped."""
        if self.devices_checked:
            where = ", ".join(self.devices_checked)
            if self.n_gradients == 1:
                line = tr(
                    "forward and 1 gradient match torch on {where} ({dtype})",
                    where=where,
                    dtype=self.dtype,
                )
            elif self.n_gradients:
                line = tr(
                    "forward and {count} gradients match torch on {where} ({dtype})",
                    count=self.n_gradients,
                    where=where,
                    dtype=self.dtype,
                )
            else:
                line = tr(
                    "forward matches torch on {where} ({dtype})", where=where, dtype=self.dtype
                )
        else:
            line = tr(
                "nothing compared with torch ({dtype}): no requested device is available",
                dtype=self.dtype,
            )
        skipped = [
            tr("{name}: {reason}, skipped", name=name, reason=translated(reason))
            for name, reason in self.devices_skipped
        ]
        return "; ".join([line, *skipped])

    def _ipython_display_(self) -> None:
        # check_parity already printed the summary; as a cell's last value, show nothing more.
        pass


@dataclass
class _TorchRun:
    """torch's results on one device, already converted to NumPy."""

    device: str
    forward: np.ndarray
    grads: dict[str, np.ndarray | None]
    upstream: np.ndarray | None  # the gradient passed to backward; None for a scalar output
    backward_ran: bool


def _engine_classes(tensor_type: type) -> tuple[type, ...]:
    # Operations on a subclass of the engine's tensor usually return the base class, so any
    # class in tensor_type's ancestry (except object) counts as "an engine tensor".
    return tuple(cls for cls in tensor_type.__mro__ if cls is not object)


def _input_arrays(inputs: Any, tensor_type: type) -> dict[str, np.ndarray]:
    """Validate ``inputs`` and return name -> NumPy array, in the given order."""
    if not isinstance(inputs, Mapping):
        raise TypeError(
            "inputs must be a mapping from names to NumPy arrays, e.g. {'a': a, 'b': b}; "
            f"got {type(inputs).__name__}"
        )
    if not inputs:
        raise ValueError("inputs is empty: give at least one named NumPy array")
    arrays: dict[str, np.ndarray] = {}
    for name, value in inputs.items():
        if not isinstance(name, str):
            raise TypeError(f"input names must be strings; got {name!r}")
        if isinstance(value, torch.Tensor):
            raise TypeError(
                f"input {name!r} is a torch.Tensor: pass NumPy arrays; the helper builds both "
                "the engine tensor and the torch tensor from them"
            )
        if isinstance(value, _engine_classes(tensor_type)):
            raise TypeError(
                f"input {name!r} is already a {tensor_type.__name__}: pass NumPy arrays; the "
                "helper builds both the engine tensor and the torch tensor from them"
            )
        try:
            # Any valid layout (reversed, strided, Fortran, big-endian) becomes a plain copy.
            array = exact_array(value, f"input {name!r}")
        except TypeError as exc:
            raise TypeError(f"{exc}: pass a NumPy array of booleans, integers or floats") from None
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise TypeError(
                f"input {name!r} has dtype {array.dtype}: pass a NumPy array of booleans, "
                "integers or floats"
            )
        if array.size == 0:
            raise ValueError(f"input {name!r} has no elements, so nothing would be compared")
        arrays[name] = array
    return arrays


def _grad_names(arrays: Mapping[str, np.ndarray], requires_grad: Any) -> list[str]:
    """Names of the inputs that require grad, in input order."""
    if requires_grad is None:
        return [name for name, array in arrays.items() if array.dtype.kind == "f"]
    # A lone string would otherwise be iterated letter by letter.
    if isinstance(requires_grad, str):
        wanted = [requires_grad]
    elif isinstance(requires_grad, Iterable):
        wanted = list(requires_grad)
    else:
        raise TypeError(
            "requires_grad must name inputs (a name or a list of names) or be None; "
            f"got {type(requires_grad).__name__} {requires_grad!r}"
        )
    for name in wanted:
        if name not in arrays:
            known = ", ".join(repr(n) for n in arrays)
            raise ValueError(f"requires_grad names unknown input {name!r}; inputs are {known}")
        if arrays[name].dtype.kind != "f":
            raise ValueError(
                f"input {name!r} has dtype {arrays[name].dtype} and cannot require grad: only "
                "floating-point tensors can (torch refuses too)"
            )
    return [name for name in arrays if name in wanted]


def _select_devices(
    devices: Iterable[str] | None, arrays: Mapping[str, np.ndarray]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Split the requested devices into (usable names, [(skipped name, reason)])."""
    known = {status.name: status for status in torch_devices()}
    if devices is None:
        requested = [(status.name, status) for status in known.values()]
    else:
        names = [devices] if isinstance(devices, str) else list(devices)
        if not names:
            raise ValueError(
                "devices is empty, so nothing would be compared: name at least one device "
                "(e.g. ['cpu']) or leave devices=None for every available one"
            )
        requested = []
        for name in names:
            base = str(name).split(":")[0]  # "cuda:1" is a cuda device
            if base not in known:
                # A device this torch build does not list (e.g. mps on Linux) is just absent.
                if base in ("cuda", "mps"):
                    requested.append((name, DeviceStatus(base, False, NOT_AVAILABLE)))
                    continue
                raise ValueError(f"unknown device {name!r}: choose from cpu, cuda, mps")
            requested.append((name, known[base]))
    has_float64 = any(array.dtype == np.float64 for array in arrays.values())
    checked: list[str] = []
    skipped: list[tuple[str, str]] = []
    for name, status in requested:
        if not status.available:
            skipped.append((name, status.reason))
        elif status.name == "mps" and has_float64:
            skipped.append((name, marked("float64 not supported")))  # MPS has no float64 at all
        else:
            checked.append(name)
    return checked, skipped


def _upstream_gradient(shape: Shape, dtype: np.dtype, seed: int) -> np.ndarray | None:
    """The gradient fed to backward: None for one element, else seeded random numbers.

    Random rather than ones, because with ones a transposed gradient often looks right.
    """
    if int(np.prod(shape)) == 1:
        return None
    # Salted: notebooks often make their inputs with default_rng(0) too, and an upstream
    # gradient equal to an input (G == A makes A.T @ G symmetric) would hide a transpose.
    rng = np.random.default_rng([seed, _GRADIENT_SALT])
    return rng.standard_normal(shape).astype(dtype)


def _run_torch(
    torch_fn: Callable[..., Any],
    arrays: Mapping[str, np.ndarray],
    grad_names: list[str],
    device: str,
    gradient_seed: int,
) -> _TorchRun:
    """Run ``torch_fn`` (and its backward, when a gradient is wanted) on one device."""
    leaves = {
        name: torch.tensor(array, device=device, requires_grad=name in grad_names)
        for name, array in arrays.items()
    }
    try:
        out = torch_fn(*leaves.values())
    except Exception as exc:
        exc.add_note(
            f"(raised on the torch side, device {device}: if fn uses names torch does not "
            "have, pass a separate torch_fn=)"
        )
        raise
    if not isinstance(out, torch.Tensor):
        raise TypeError(f"torch_fn returned {type(out).__name__}, expected a torch.Tensor")
    forward = out.detach().cpu().numpy()
    upstream = None
    # Without a graph to the output (nothing requires grad, or torch_fn detached it),
    # torch has no backward to run: every .grad stays None.
    backward_ran = bool(grad_names) and out.requires_grad
    if backward_ran:
        upstream = _upstream_gradient(forward.shape, forward.dtype, gradient_seed)
        if upstream is None:
            out.backward()
        else:
            out.backward(torch.tensor(upstream, device=device))
    grads = {
        name: None if leaves[name].grad is None else leaves[name].grad.cpu().numpy()
        for name in grad_names
    }
    for listener in tuple(_torch_run_listeners):
        listener(device, forward.dtype.name)
    return _TorchRun(device, forward, grads, upstream, backward_ran)


# Observers of torch runs: the instructor's gpu-check counts them by device and dtype.
_torch_run_listeners: list[Callable[[str, str], None]] = []


def add_torch_run_listener(listener: Callable[[str, str], None]) -> Callable[[], None]:
    """Call ``listener(device, dtype name)`` after each torch run; return its remover.

    It is called inside the run's settings (TF32 off on CUDA), so it may read them.
    """
    _torch_run_listeners.append(listener)
    return lambda: _torch_run_listeners.remove(listener)


def _engine_grad(tensor: Any) -> Any:
    """The engine's ``.grad``: None, an array, or an engine tensor (then its ``.data``).

    Returned as found: ``compare_arrays`` reads it into an exact NumPy array.
    """
    grad = getattr(tensor, "grad", None)
    if grad is None:
        return None
    if not issubclass(type(grad), np.ndarray) and hasattr(grad, "data"):
        grad = grad.data
    return grad


def _check_seed(seed: Any) -> int:
    """``gradient_seed`` as a Python int; NumPy's generators take non-negative integers."""
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise TypeError(f"gradient_seed must be an integer; got {type(seed).__name__} {seed!r}")
    if seed < 0:
        raise ValueError(f"gradient_seed must be non-negative; got {seed}")
    return int(seed)


def _nothing_compared(skipped: list[tuple[str, str]]) -> AssertionError:
    """The failure of a check whose every requested device was skipped."""
    reasons = "; ".join(f"{name}: {translated(reason)}" for name, reason in skipped)
    return failure(
        tr(
            "nothing compared with torch: no requested device could run ({reasons})",
            reasons=reasons,
        )
        + "\n  "
        + hint_line(
            tr(
                "a check that compares nothing cannot pass; leave devices=None to use "
                "every available device (cpu always is)"
            )
        )
    )


def _broadcast_shape(arrays: Mapping[str, np.ndarray], fallback: Shape) -> Shape:
    """Shape of the inputs broadcast together (a gradient wrongly left in it needs unbroadcast)."""
    try:
        return tuple(np.broadcast_shapes(*(a.shape for a in arrays.values())))
    except ValueError:
        return fallback  # e.g. matmul operands: the output's shape is the best guess


def check_parity(
    fn: Callable[..., Any],
    inputs: Mapping[str, Any],
    *,
    tensor_type: type,
    torch_fn: Callable[..., Any] | None = None,
    requires_grad: Iterable[str] | None = None,
    gradient_seed: int = 0,
    devices: Iterable[str] | None = None,
    quiet: bool = False,
) -> ParityReport:
    """Assert that ``fn`` gives torch's forward value and input gradients on every device.

    ``fn`` gets engine tensors, ``torch_fn`` (default ``fn``) torch tensors, both built from
    the NumPy arrays in ``inputs`` in their order. ``requires_grad`` names the inputs to
    differentiate (default: every floating input). Errors in ``fn`` propagate unchanged.

    ``devices`` (default: every device torch can use here; cpu always can) limits the
    comparison; a requested device that is unavailable is skipped and named in the report,
    and when no requested device can run the check fails, since it compared nothing.
    """
    __tracebackhide__ = True  # tracebacks show the student's code, not ours
    if not callable(fn):
        raise TypeError(f"fn must be callable (e.g. a lambda); got {type(fn).__name__}")
    if torch_fn is None:
        torch_fn = fn
    elif not callable(torch_fn):
        raise TypeError(f"torch_fn must be callable or None; got {type(torch_fn).__name__}")
    if not isinstance(tensor_type, type):
        raise TypeError(
            "tensor_type must be your engine's tensor class (e.g. Tensor); "
            f"got {type(tensor_type).__name__} {tensor_type!r}"
        )
    gradient_seed = _check_seed(gradient_seed)
    arrays = _input_arrays(inputs, tensor_type)
    grad_names = _grad_names(arrays, requires_grad)
    checked, skipped = _select_devices(devices, arrays)
    if not checked:
        raise _nothing_compared(skipped)

    # The student's forward first: its exceptions reach the student with their traceback.
    leaves = {
        name: tensor_type(array.copy(), requires_grad=name in grad_names)
        for name, array in arrays.items()
    }
    out = fn(*leaves.values())
    if not isinstance(out, _engine_classes(tensor_type)):
        raise failure(
            tr(
                "forward: your function returned {got}, expected a {expected}",
                got=type(out).__name__,
                expected=tensor_type.__name__,
            )
        )
    engine_forward = student_array("forward", getattr(out, "data", None))

    runs = []
    for device in checked:
        if device.startswith("cuda"):
            with tf32_disabled():  # otherwise float32 matmuls on CUDA are not float32
                runs.append(_run_torch(torch_fn, arrays, grad_names, device, gradient_seed))
        else:
            runs.append(_run_torch(torch_fn, arrays, grad_names, device, gradient_seed))

    if runs[0].forward.size == 0:
        raise ValueError("torch_fn's result has no elements, so nothing would be compared")

    # Forward on every device before any gradient: a wrong forward explains wrong gradients.
    for run in runs:
        compare_arrays("forward", engine_forward, run.forward, device=run.device)

    dtype = runs[0].forward.dtype.name
    if runs[0].backward_ran:
        upstream = runs[0].upstream
        if upstream is None:
            out.backward()
        else:
            out.backward(tensor_type(upstream))
        output_shape = _broadcast_shape(arrays, engine_forward.shape)
        for run in runs:
            for name in grad_names:
                compare_arrays(
                    f"grad of input {name!r}",
                    _engine_grad(leaves[name]),
                    run.grads[name],
                    device=run.device,
                    gradient=True,
                    input_shape=arrays[name].shape,
                    output_shape=output_shape,
                )

    report = ParityReport(
        devices_checked=checked,
        devices_skipped=skipped,
        n_gradients=len(grad_names) if runs[0].backward_ran else 0,
        dtype=dtype,
    )
    if not quiet:
        report_pass(report.summary())  # printed; in a Jupyter kernel, a green line
    return report
