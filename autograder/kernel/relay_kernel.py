"""The relay of a forked trusted kernel, run by path as the kernelspec's command
(``python -S relay_kernel.py SOCKET KERNEL-ARGS...``): it has the grading worker's warm
process fork the kernel, then stands in for it (see the grading wing's ``forked_kernels``).

It sends the warm process at SOCKET its command line, environment, working folder and
standard streams; passes the signals it gets on to the kernel; and exits with the kernel's
status (1 when none came). Standard library only.
"""

import array
import json
import os
import signal
import socket
import sys

FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")


def ask_for_kernel(path: str, argv: list[str]) -> socket.socket:
    """The connection to the warm process at ``path``, its request for a kernel sent."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    request = json.dumps({"argv": argv, "env": dict(os.environ), "cwd": os.getcwd()})
    data = request.encode()
    streams = (socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [0, 1, 2]))
    sock.sendmsg([len(data).to_bytes(4, "big") + data], [streams])
    return sock


def forward_signals(pid: int) -> None:
    """Pass each of the ``FORWARDED`` signals on to the process ``pid``."""

    def forward(number: int, frame: object) -> None:
        try:
            os.kill(pid, number)
        except ProcessLookupError:
            pass

    for name in FORWARDED:
        signal.signal(getattr(signal, name), forward)


def main(argv: list[str]) -> None:
    """Relay the kernel ``argv[2:]`` forked by the warm process at ``argv[1]``."""
    answers = ask_for_kernel(argv[1], argv[2:]).makefile("rb")
    forward_signals(int(answers.readline()))
    status = answers.readline().strip()
    os._exit(int(status) if status else 1)


if __name__ == "__main__":
    main(sys.argv)
