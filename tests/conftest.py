"""Shared set-up: kernels started by tests come from this environment."""

import os

from postgres_server import postgres_server  # noqa: F401  (the PostgreSQL test server)

# Same as the Makefile: nbgrader and nbval must start this interpreter's kernel,
# not a python3 kernelspec that may exist in the user's home folder.
os.environ["JUPYTER_PREFER_ENV_PATH"] = "1"
# No forced matplotlib backend, as in the student's lab: kernels started by nbval and
# nbgrader draw figures inline (image/png outputs, no display needed).
os.environ.pop("MPLBACKEND", None)
