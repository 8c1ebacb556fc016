"""Does the system-call filter load on this machine? Run by path in a process of its own
(``python probe_filter.py FILTER-FILE``, by ``autograd-course doctor``): it loads the filter
from its file as the kernel's launcher does, installs it and prints whether it is active.
"""

import importlib.util
import os
import sys


def main(argv: list[str]) -> None:
    """Install the filter in the file ``argv[1]``; print ``filter_active`` for this process."""
    spec = importlib.util.spec_from_file_location("f", argv[1])
    assert spec is not None and spec.loader is not None, argv[1]
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.install()
    print(module.filter_active(os.getpid()))


if __name__ == "__main__":
    main(sys.argv)
