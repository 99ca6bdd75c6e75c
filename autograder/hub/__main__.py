"""python -m autograder.hub: see launch.main."""

import sys

from autograder.hub.launch import main

sys.exit(main())
