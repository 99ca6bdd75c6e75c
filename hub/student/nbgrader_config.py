"""nbgrader for a student on the course's JupyterHub: the exchange to fetch from and submit to, nothing else.

JupyterHub (hub/jupyterhub_config.py) puts this folder on the student's JUPYTER_CONFIG_PATH and names the
exchange in ATTENTION_HUB_EXCHANGE.
"""

import os

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = "attention"
c.Exchange.root = os.environ["ATTENTION_HUB_EXCHANGE"]
# Submissions and feedback go by the hub account's name: on one machine every account is the same OS user, whose
# name nbgrader would use otherwise (with system accounts, as on a real server, the two are the same)
c.CourseDirectory.student_id = os.environ["JUPYTERHUB_USER"]
