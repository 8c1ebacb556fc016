"""The sandbox's launcher, run by path outside the sandbox before the kernel
(``python -I -S enter_sandbox.py SETTINGS KERNEL-ARGV...``): it hides every notebook under
the job's working folder, joins the job's pids cgroup, then execs bwrap on the kernel.

SETTINGS is JSON: ``bwrap`` (its path), ``options`` (bwrap's options but the last ones),
``work`` (the working folder) and ``cgroup`` (the cgroup's folder, "" for none). The
notebooks are listed when the kernel starts: nbgrader writes the notebook, hidden tests and
all, into the working folder just before. SIGINT is ignored, and bwrap inherits that, so
that nbclient's interrupt on a cell timeout (a SIGINT to the kernel's process group)
reaches the kernel without ending bwrap: a signal interrupts a kernel busy in C code, where
an interrupt message waits for the kernel's control thread. Standard library only.
"""

import json
import os
import signal
import sys


def hidden_notebooks(work: str) -> list[str]:
    """bwrap options covering every notebook under ``work`` with an empty file."""
    options = []
    for folder, _, names in os.walk(work):
        for name in sorted(names):
            if name.endswith(".ipynb"):
                options += ["--ro-bind", "/dev/null", os.path.join(folder, name)]
    return options


def join_cgroup(cgroup: str) -> None:
    """Move this process (and so the kernel it becomes) into the pids cgroup ``cgroup``."""
    with open(os.path.join(cgroup, "cgroup.procs"), "w") as procs:
        procs.write(str(os.getpid()))


def main(argv: list[str]) -> None:
    """Become bwrap running the kernel ``argv[2:]`` with the settings ``argv[1]``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    settings = json.loads(argv[1])
    work = settings["work"]
    args = [settings["bwrap"], *settings["options"], *hidden_notebooks(work)]
    if settings["cgroup"]:
        join_cgroup(settings["cgroup"])
    cwd = os.getcwd()
    inside = cwd == work or cwd.startswith(work + os.sep)
    args += ["--chdir", cwd if inside else work, "--", *argv[2:]]
    os.execv(args[0], args)


if __name__ == "__main__":
    main(sys.argv)
