"""A course folder and the class command: the folder's layout and configuration, its uploads and
students, a whole class's run (``run.grade_course``), nbgrader's export and the closing table.

Hands each student's notebook to the class engine (``autograder.grading``) and reads its results back.
"""
