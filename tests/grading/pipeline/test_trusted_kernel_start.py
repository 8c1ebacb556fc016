"""The trusted kernel's client connects without waiting for the kernel to answer, so that
the trusted kernel starts while the student's kernel does (about 0.35 s of every job): a
kernel that never answers still gets a client at once; waiting is for the first test cell."""

import json
import sys
import time

from traitlets.config import Config

from autograder.grading.pipeline.verdicts.executor import TRUSTED_KERNEL, TrustedKernelClient


def test_the_client_of_a_kernel_still_starting_is_ready_at_once(tmp_path):
    spec = tmp_path / "kernels" / TRUSTED_KERNEL
    spec.mkdir(parents=True)
    silent = [sys.executable, "-c", "import time; time.sleep(60)"]  # never answers
    (spec / "kernel.json").write_text(json.dumps({"argv": silent, "display_name": "silent"}))
    trusted = TrustedKernelClient(
        config=Config(), spec_folder=str(tmp_path / "kernels"), startup_timeout=30
    )
    trusted.km = trusted.create_kernel_manager()
    trusted.start_new_kernel()
    try:
        started = time.perf_counter()
        client = trusted.start_new_kernel_client()
        waited = time.perf_counter() - started
        assert client is trusted.kc and not client.allow_stdin
        # nbclient's own start waits for kernel_info: the 30 s of startup_timeout here.
        assert waited < 10, f"the client waited {waited:.1f} s for the kernel"
    finally:
        trusted._cleanup_kernel()
