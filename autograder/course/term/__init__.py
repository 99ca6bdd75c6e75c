"""The course's term, edited by the instructor: ``python -m autograder.course.term`` (``__main__``) grants each
student's own due date (an extension, late-day tokens) in the gradebook's database.

The facts themselves are kept on the ground floor, in autograder.term (``Term``: extensions, tokens granted and
spent; ``LateDays``: the course's rule, ``c.LateDays.*``), because every stage asks it for a student's own due date:
the grading service's checks (autograder.service.instant), the class run's late penalty (nbgrader's own
``SubmittedAssignment.extension``, filled from it), the gradebook, the LMS passback and the student's checks page.
"""
