"""python -m autograder.validate: see command.main."""

import sys

from autograder.validate.command import main

sys.exit(main())
