"""The course's term: each student's own due date (an extension, late-day tokens), in the gradebook's database.

``store`` keeps the facts (``Term``: extensions, tokens granted and spent; ``LateDays``: the course's rule,
``c.LateDays.*``); every stage asks it for a student's own due date: the grading service's checks
(autograder.service.instant), the class run's late penalty (nbgrader's own ``SubmittedAssignment.extension``,
filled from it), the gradebook, the LMS passback and the student's checks page. ``python -m
autograder.course.term`` edits them (``__main__``).
"""
