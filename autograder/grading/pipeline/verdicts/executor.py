"""nbgrader's Execute with trusted verdicts: the notebook's given and solution cells run in
the student's kernel as before; each graded test cell runs in a second, trusted kernel
that reaches the student's objects only through the verdict channel, so its outputs and
errors (what nbgrader scores) come from a process the student's code cannot reach.

For each test cell: the student's kernel is asked (a silent request, on its main thread)
to serve the channel; the trusted kernel accepts, binds the cell's free names, runs the
cell, and stops the student's side; the student's kernel's reply is then awaited. A test
whose student side never connects gets an error output (no verdict: a fail)."""

import json
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.utils import ensure_async
from jupyter_core.utils import run_sync
from nbclient.util import run_hook
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Float, Unicode

from autograder.grading.course.owned_temp import owned_temp_folder
from autograder.grading.pipeline.verdicts import forked_kernels
from autograder.grading.pipeline.verdicts.cells import (
    free_names,
    preamble,
    read_plan,
    with_twins,
    without_autograd,
)
from autograder.grading.pipeline.verdicts.kernel_ready import kernel_ready, reply_to
from autograder.kernel.environment import NO_IMPORT_ENV
from autograder.kernel.runtime_audit import SERVE_REQUEST

TRUSTED_KERNEL = "autograder-trusted"


class TrustedKernelClient(Execute):
    """The trusted kernel: a plain ipykernel of this Python, from a private kernelspec."""

    spec_folder = Unicode()

    def create_kernel_manager(self) -> AsyncKernelManager:
        """The trusted kernel's manager, reading only our own kernelspec. Its connection file
        and sockets go in the private folder beside the kernelspec, whatever the job's
        config says for the student's kernel (whose folder the student's code can reach:
        there it could read the trusted kernel's key, or bind its socket paths first)."""
        specs = KernelSpecManager(kernel_dirs=[self.spec_folder])
        private = Path(self.spec_folder).parent
        self.km = AsyncKernelManager(
            kernel_name=TRUSTED_KERNEL,
            kernel_spec_manager=specs,
            config=self.config,
            transport="ipc",
            ip=str(private / "kernel"),
            connection_file=str(private / "connection.json"),
        )
        return self.km

    async def async_start_new_kernel_client(self) -> Any:
        """Connect without waiting for the kernel to be ready, so that its start (and the
        preamble queued behind it: torch's import) overlaps the student kernel's; the
        preamble's reply, awaited before the first test cell, proves it ready."""
        self.kc = self.km.client()
        await ensure_async(self.kc.start_channels())
        self.kc.allow_stdin = False
        return self.kc

    # nbclient's sync name wraps its own coroutine, not an override: wrapped again here.
    start_new_kernel_client = run_sync(async_start_new_kernel_client)


def write_trusted_kernelspec(folder: Path) -> None:
    """A kernelspec running ipykernel in this Python, without the grading kernel's wrapper."""
    target = folder / TRUSTED_KERNEL
    target.mkdir(parents=True, exist_ok=True)
    # Test cells need no history: with it off, the trusted kernel writes nothing.
    kernel_args = ["-f", "{connection_file}", "--HistoryManager.enabled=False"]
    if forked_kernels.enabled():
        argv = forked_kernels.relay_argv(kernel_args)
    else:
        argv = [sys.executable, "-m", "ipykernel_launcher", *kernel_args]
    spec = {
        "argv": argv,
        "display_name": "Python 3 (trusted verdicts)",
        "language": "python",
        "metadata": {"debugger": False},
    }
    (target / "kernel.json").write_text(json.dumps(spec))


def error_output(name: str, message: str) -> NotebookNode:
    """An error output nbgrader scores as a failed test."""
    return NotebookNode(
        output_type="error", ename=name, evalue=message, traceback=[f"{name}: {message}"]
    )


class TrustedExecute(Execute):
    """Execute whose graded test cells run in a trusted kernel (see the module's doc)."""

    socket_dir = Unicode("", help="folder for the channel's socket (default: a temp dir)").tag(
        config=True
    )
    source_folder = Unicode(
        "", help="the assignment's instructor notebooks (for the torch twins the tests use)"
    ).tag(config=True)
    private_dir = Unicode(
        "", help="folder for the trusted kernel's own files (default: the temp folder)"
    ).tag(config=True)
    serve_wait = Float(20.0, help="seconds for the student's kernel to connect").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: Any = None, km: Any = None) -> Any:
        """Start the trusted kernel, then execute as nbgrader; its start and preamble overlap
        the student kernel's and are awaited before the first test cell. Student code that
        takes the socket's path first makes the preamble's bind, and so the grading, fail."""
        info = (resources or {}).get("nbgrader", {})
        self._plan = read_plan(info["db_url"], info["notebook"], info["assignment"])
        self._ended_kernel = ""  # why the trusted side ended the student's kernel, if it did
        source = Path(self.source_folder) / f"{info['notebook']}.ipynb"
        if self.source_folder and source.is_file():
            self._plan = with_twins(self._plan, nbformat.read(source, as_version=4))
        if not self._plan.tests:
            return super().preprocess(nb, resources, km)
        # The socket's folder is one the student's kernel reaches (and may write); the
        # trusted kernel's own files (kernelspec, IPython profile and history, working
        # folder) go in a private one, so that nothing there is the student's to change and
        # nothing the trusted kernel writes shows in the folders a lending copy is checked in.
        folder = Path(tempfile.mkdtemp(prefix="verdicts-", dir=self.socket_dir or None))
        private = owned_temp_folder("verdicts-trusted-", self.private_dir or None)
        try:
            write_trusted_kernelspec(private / "kernels")
            self._socket = str(folder / "channel.sock")
            trusted = TrustedKernelClient(
                config=self.config,
                spec_folder=str(private / "kernels"),
                resources={"metadata": {"path": str(private)}},
            )
            trusted.nb = nb
            env = dict(os.environ, IPYTHONDIR=str(private / "ipython"), PYTHONSAFEPATH="1")
            env["PYTHONNOUSERSITE"] = "1"
            env.pop(NO_IMPORT_ENV, None)  # the student's kernel's, not this one's
            sources = (cell.source for cell in nb.cells if cell.cell_type == "code")
            env[forked_kernels.EXTRAS_ENV] = forked_kernels.extra_modules(sources)
            with trusted.setup_kernel(env=env):
                self._trusted = trusted
                code = preamble(self._plan, self._socket)
                self._preamble = trusted.kc.execute(code, silent=True, store_history=False)
                return super().preprocess(nb, resources, km)
        finally:
            self._trusted = self._preamble = None
            shutil.rmtree(folder, ignore_errors=True)
            shutil.rmtree(private, ignore_errors=True)

    async def async_start_new_kernel_client(self) -> Any:
        """nbclient's client of the student's kernel, ready by ``kernel_ready`` (without
        ``wait_for_ready``'s last 0.2 s)."""
        self.kc = self.km.client()
        await ensure_async(self.kc.start_channels())
        try:
            await kernel_ready(self.kc, float(self.startup_timeout))
        except Exception:
            await self._async_cleanup_kernel()
            raise
        self.kc.allow_stdin = False
        await run_hook(self.on_notebook_start, notebook=self.nb)
        return self.kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)

    def preprocess_cell(self, cell: NotebookNode, resources: Any, index: int) -> Any:
        """A graded test cell in the trusted kernel; any other cell as nbgrader does."""
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and grade_id == "setup" and self._plan.setup:
            return self._setup_without_autograd(cell, resources, index)
        if cell.cell_type != "code" or grade_id not in self._plan.tests:
            return super().preprocess_cell(cell, resources, index)
        source = self._plan.tests[grade_id] or cell.source
        cell.source = source
        cell.outputs = []
        self._check_assign_resources(resources)
        self._await_preamble()
        # The runtime record knows this request: its work is charged to no student cell.
        request = SERVE_REQUEST.format(path=self._socket)
        served = self.kc.execute(request, silent=True, store_history=False)
        names = sorted({*free_names(source), *self._plan.twin_names})
        timeout = float(self.timeout or 120)
        begin = f"__verdicts__.begin(globals(), {names!r}, {timeout!r}, {self.serve_wait!r})"
        failure = self._run_silent(self._trusted, begin, self.serve_wait + 60, check=False)
        if failure is None:
            try:
                self._trusted.execute_cell(cell, index, store_history=True)
            finally:
                ended = self._run_silent(self._trusted, "__verdicts__.end()", 60, check=False)
            if ended:  # the cell's end went wrong (a copy that reached back): no verdict
                name, _, message = ended.partition(": ")
                cell.outputs.append(error_output(name, message))
                # end() refuses a lending only when it ended the kernel for it.
                self._ended_kernel = message if name == "LendingRefused" else ""
        else:
            cell.outputs.append(error_output("NoVerdict", failure))
        self._await_reply(served, timeout)
        return cell, self.resources

    def _setup_without_autograd(self, cell: NotebookNode, resources: Any, index: int) -> Any:
        """The setup cell (the gradebook's text) in the student's kernel, without its autograd
        imports: that kernel has no autograd library; the notebook shows the cell as given."""
        shown = cell.source
        cell.source = without_autograd(self._plan.setup)
        try:
            return super().preprocess_cell(cell, resources, index)
        finally:
            cell.source = shown

    def _await_preamble(self) -> None:
        """Before the first test cell: the trusted kernel has started and run its preamble."""
        if self._preamble is None:
            return
        msg_id, self._preamble = self._preamble, None
        wait = float(self.startup_timeout) + 120
        self._check_reply(self._reply(self._trusted, msg_id, wait), wait, check=True)
        # The client connected before the kernel was up: its output channel may not be
        # subscribed yet, and a test cell's output must not be lost.
        run_sync(kernel_ready)(self._trusted.kc, wait)

    def _run_silent(
        self, client: Execute, code: str, timeout: float, check: bool = True
    ) -> str | None:
        """Run ``code`` silently in ``client``'s kernel; its error message, or None."""
        msg_id = client.kc.execute(code, silent=True, store_history=False)
        return self._check_reply(self._reply(client, msg_id, timeout), timeout, check)

    def _check_reply(self, reply: dict | None, timeout: float, check: bool) -> str | None:
        """The error message of a silent request's ``reply`` (None if it succeeded); with
        ``check``, an error instead."""
        if reply is None:
            message = f"the trusted kernel did not answer within {timeout:g} s"
        elif reply["content"]["status"] == "ok":
            return None
        else:
            content = reply["content"]
            message = f"{content.get('ename')}: {content.get('evalue')}"
        if check:
            raise RuntimeError(f"trusted kernel setup failed: {message}")
        return message

    def _reply(self, client: Execute, msg_id: str, timeout: float) -> dict | None:
        """The shell reply to ``msg_id`` within ``timeout`` seconds, or None."""
        return run_sync(reply_to)(client.kc.get_shell_msg, msg_id, timeout)

    def _await_reply(self, msg_id: str, timeout: float) -> None:
        """Wait for the student's kernel to finish serving; interrupt it if it does not."""
        from nbclient.exceptions import DeadKernelError

        if self._reply(self, msg_id, 10.0) is not None:
            return
        if not run_sync(self.km.is_alive)():
            raise DeadKernelError(
                self._ended_kernel or "the student's kernel died while its objects were tested"
            )
        # Stopped while a copy of it served the cell (``lending``), by a trusted kernel that
        # died before it could let it go on: it goes on now.
        run_sync(self.km.signal_kernel)(signal.SIGCONT)
        run_sync(self.km.interrupt_kernel)()
        self._reply(self, msg_id, timeout)


def trusted_preprocessors() -> list[type]:
    """nbgrader's autograde preprocessors with Execute replaced by TrustedExecute."""
    from nbgrader.converters import Autograde

    default = Autograde.class_traits()["autograde_preprocessors"].default()
    return [TrustedExecute if cls is Execute else cls for cls in default]
