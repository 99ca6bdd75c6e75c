"""python -m autograder.service: see command.main."""

import sys

from autograder.service.command import main

sys.exit(main())
