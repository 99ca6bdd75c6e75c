"""The grading service: instant checks of each Submit (``instant``), recorded (``attempts``) under the
instructor's policy (``policy``), shown on a JupyterHub service's pages (``app``).

Hands verdicts to the student's page and, where the policy says so, scores to the LMS.
"""
