"""Which torch devices a parity check can run on, and float32-honest CUDA settings.

The course machines are mostly CPU-only, but the same checks should also exercise CUDA or
Apple's MPS when present, and say plainly which devices were skipped and why.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from autograder.checks.language import marked
from autograder.checks.optional_torch import torch

NOT_AVAILABLE = marked("not available")


@dataclass(frozen=True)
class DeviceStatus:
    """One torch device: its name, whether it can be used here, and why not if it cannot."""

    name: str
    available: bool
    reason: str = ""


def torch_devices() -> list[DeviceStatus]:
    """List cpu, cuda and (where this torch build knows it) mps, with their availability."""
    statuses = [DeviceStatus("cpu", True)]
    cuda_ok = torch.cuda.is_available()
    statuses.append(DeviceStatus("cuda", cuda_ok, "" if cuda_ok else NOT_AVAILABLE))
    # MPS exists only in macOS builds; elsewhere listing it would be noise on every line.
    mps = getattr(torch.backends, "mps", None)
    if mps is not None and mps.is_built():
        mps_ok = bool(mps.is_available())
        statuses.append(DeviceStatus("mps", mps_ok, "" if mps_ok else NOT_AVAILABLE))
    return statuses


@contextmanager
def tf32_disabled() -> Iterator[None]:
    """Turn TF32 off for CUDA matmuls and convolutions inside the block, then restore.

    With TF32 on, float32 matmuls on recent GPUs keep about 10 mantissa bits, so a float32
    comparison against them would test the GPU's rounding rather than the student's code.
    """
    matmul_before = torch.backends.cuda.matmul.allow_tf32
    cudnn_before = torch.backends.cudnn.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = matmul_before
        torch.backends.cudnn.allow_tf32 = cudnn_before
