"""Starting grading kernels: the trusted kernel's client connects without waiting for the
kernel (so it starts while the student's kernel does), and a kernel is ready once it answers
and its output channel is subscribed (``kernel_ready``, without jupyter_client's 0.2 s of
listening for silence); a kernel that dies or never answers is an error that says which."""

import json
import sys
import time

import pytest
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


def started_kernel(tmp_path, argv):
    """An async kernel manager of ``argv`` (started) and its client (channels started)."""
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from nbclient.util import run_sync

    spec = tmp_path / "kernels" / "k"
    spec.mkdir(parents=True)
    argv = [*argv, "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "k"}))
    manager = AsyncKernelManager(
        kernel_name="k", kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(spec.parent)])
    )
    run_sync(manager.start_kernel)()
    client = manager.client()
    client.start_channels()
    return manager, client


def test_a_ready_kernel_answers_and_its_output_reaches_the_client(tmp_path):
    from nbclient.util import run_sync

    from autograder.grading.pipeline.verdicts.kernel_ready import kernel_ready

    manager, client = started_kernel(tmp_path, [sys.executable, "-m", "ipykernel_launcher"])
    try:
        run_sync(kernel_ready)(client, 60)
        request = client.execute("print('from the kernel')")
        texts = []
        while True:  # the output channel was subscribed before the cell ran: nothing lost
            message = run_sync(client.get_iopub_msg)(timeout=30)
            if message["parent_header"].get("msg_id") != request:
                continue
            if message["msg_type"] == "stream":
                texts.append(message["content"]["text"])
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
        assert texts == ["from the kernel\n"]
    finally:
        client.stop_channels()
        run_sync(manager.shutdown_kernel)(now=True)


def test_a_kernel_that_dies_or_never_answers_is_an_error_naming_which(tmp_path):
    from nbclient.util import run_sync

    from autograder.grading.pipeline.verdicts.kernel_ready import kernel_ready

    for name, code, timeout, expected in (
        ("dies", "raise SystemExit(3)", 60, "the kernel died before it answered"),
        ("silent", "import time; time.sleep(60)", 2, "did not answer within 2 s"),
    ):
        manager, client = started_kernel(tmp_path / name, [sys.executable, "-c", code])
        try:
            with pytest.raises(RuntimeError, match=expected):
                run_sync(kernel_ready)(client, timeout)
        finally:
            client.stop_channels()
            run_sync(manager.shutdown_kernel)(now=True)
