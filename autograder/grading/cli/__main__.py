"""``python -m autograder.grading.cli``: the same command line as ``autograd-course``."""

import sys

from autograder.grading.cli.main import main

sys.exit(main())
