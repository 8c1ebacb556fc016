"""Trusted kernels forked from a warm process, started by a real jupyter_client from the
trusted kernelspec: the kernel runs with the relay's environment and folder, torch already
imported; interrupts reach it; a killed relay ends its kernel; the warm process ends with
the process that started it."""

import os
import shutil
import signal
import subprocess
import sys
import time

import psutil
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

from autograder.grading.pipeline.verdicts import forked_kernels
from autograder.grading.pipeline.verdicts.executor import TRUSTED_KERNEL, write_trusted_kernelspec


def wait_gone(pid: int, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
            return True
        time.sleep(0.05)
    return False


@pytest.fixture
def kernel(tmp_path, monkeypatch):
    monkeypatch.setenv(forked_kernels.SWITCH_ENV, "on")
    write_trusted_kernelspec(tmp_path / "kernels")
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    manager = KernelManager(kernel_name=TRUSTED_KERNEL, kernel_spec_manager=specs)
    folder = tmp_path / "work"
    folder.mkdir()
    manager.start_kernel(cwd=str(folder), env=dict(os.environ, FORKED_TEST="job value"))
    client = manager.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    yield manager, client, folder
    client.stop_channels()
    if manager.is_alive():
        manager.shutdown_kernel(now=True)


def value(client, expression: str) -> str:
    outputs = []
    client.execute_interactive(
        f"print(repr({expression}))",
        timeout=30,
        output_hook=lambda message: outputs.append(message["content"].get("text", "")),
    )
    return "".join(outputs).strip()


def test_a_forked_kernel_has_the_relays_environment_and_folder_and_torch(kernel):
    manager, client, folder = kernel
    assert value(client, "'torch' in __import__('sys').modules") == "True"  # warm already
    assert value(client, "__import__('os').environ['FORKED_TEST']") == "'job value'"
    assert value(client, "__import__('os').getcwd()") == repr(str(folder))
    relay = psutil.Process(manager.provisioner.process.pid)
    kernel_pid = int(value(client, "__import__('os').getpid()"))
    assert kernel_pid != relay.pid
    assert psutil.Process(kernel_pid).parent().pid in forked_kernels.warm_pids()


def test_an_interrupt_reaches_the_forked_kernel(kernel):
    manager, client, _ = kernel
    message_id = client.execute("import time\ntime.sleep(60)")
    time.sleep(1)
    manager.interrupt_kernel()
    reply = client.get_shell_msg(timeout=20)
    assert reply["parent_header"]["msg_id"] == message_id
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KeyboardInterrupt"


def test_a_killed_relay_ends_its_kernel(kernel):
    manager, client, _ = kernel
    kernel_pid = int(value(client, "__import__('os').getpid()"))
    os.kill(manager.provisioner.process.pid, signal.SIGKILL)
    assert wait_gone(kernel_pid)


def test_the_warm_process_ends_with_its_parent(tmp_path):
    starter = (
        "from autograder.grading.pipeline.verdicts import forked_kernels\n"
        "forked_kernels.warm_socket()\n"
        "print(*forked_kernels.warm_pids(), flush=True)\n"
        "import time\ntime.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", starter], stdout=subprocess.PIPE, text=True)
    warm = int(parent.stdout.readline())
    assert psutil.Process(warm).ppid() == parent.pid
    parent.kill()
    parent.wait()
    assert wait_gone(warm)


def test_the_warm_process_imports_what_a_request_asks_for_before_forking(tmp_path, monkeypatch):
    # A kernel's request that names torch.optim's lazy import has it imported by the warm
    # process (so also in every later kernel); a request that names nothing leaves it out.
    monkeypatch.setenv(forked_kernels.SWITCH_ENV, "on")
    # A value no other test uses: a warm process of this test's own, which nobody asked yet.
    monkeypatch.setenv("MALLOC_ARENA_MAX", "3")
    # The warm process starts in the first job's folder, as a grading worker's would, and
    # that folder is gone by the next request (torch._dynamo's import reads the working folder).
    job = tmp_path / "job"
    job.mkdir()
    monkeypatch.chdir(job)
    write_trusted_kernelspec(tmp_path / "kernels")
    specs = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")])
    seen = []
    for asked in ("", forked_kernels.extra_modules(["opt = torch.optim.SGD(params, lr=0.1)"]), ""):
        manager = KernelManager(kernel_name=TRUSTED_KERNEL, kernel_spec_manager=specs)
        manager.start_kernel(
            cwd=str(tmp_path), env={**os.environ, forked_kernels.EXTRAS_ENV: asked}
        )
        client = manager.client()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)
            seen.append(value(client, "'torch._dynamo' in __import__('sys').modules"))
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
        if job.exists():
            monkeypatch.chdir(tmp_path)
            shutil.rmtree(job)
    assert seen == ["False", "True", "True"]


def test_a_notebook_asks_for_the_modules_its_code_names():
    assert forked_kernels.extra_modules(["x = 1", "import numpy as np"]) == ""
    plotting = ["import matplotlib.pyplot as plt", "torch.optim.SGD(p, lr=0.1)"]
    assert forked_kernels.extra_modules(plotting) == "matplotlib.pyplot,torch._dynamo"
    checking = ["check_parity(f, x)", "y.backward(torch.ones(3))"]
    assert forked_kernels.extra_modules(checking) == "torch.fx.experimental.symbolic_shapes"
