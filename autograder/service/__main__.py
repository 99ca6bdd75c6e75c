"""python -m autograder.service: see app.main."""

import sys

from autograder.service.app import main

sys.exit(main())
