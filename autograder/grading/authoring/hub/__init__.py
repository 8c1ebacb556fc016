"""The course on a local JupyterHub: Unix accounts, nbgrader's exchange, the students' kit-only
environment, the proxy from npm and the hub itself (``autograd-course hub``, ``make hub``)."""
