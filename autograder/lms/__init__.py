"""The school's LMS: the gradebook as Canvas's and Moodle's import files (``files``) and the LTI 1.3 tool
(``lti``).

Reads the gradebook; hands scores and grade columns to the LMS.
"""
