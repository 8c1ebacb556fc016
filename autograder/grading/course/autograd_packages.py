"""The autograd libraries a student's kernel must not have when trusted verdicts grade it:
the sandbox does not mount them, an unsandboxed kernel's launcher refuses their import, and a
test cell that imports one runs in the trusted kernel."""

AUTOGRAD_PACKAGES = ("torch", "functorch", "jax", "autograd", "mygrad", "tensorflow")
