"""python -m autograder.report: the command line of autograder.report (autograder.report.command)."""

import sys

from autograder.report.command import main

sys.exit(main())
