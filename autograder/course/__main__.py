"""python -m autograder.course: see classroom.main."""

import sys

from autograder.course.classroom import main

sys.exit(main())
