"""python -m autograder.visible: record an assignment's visible checks (autograder.visible.record)."""

import sys

from autograder.visible.record import main

sys.exit(main())
