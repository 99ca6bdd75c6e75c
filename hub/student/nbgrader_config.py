"""nbgrader for a student on the course's JupyterHub: the exchange to fetch from and submit to, nothing else.

JupyterHub (hub/jupyterhub_config.py) puts this folder on the student's JUPYTER_CONFIG_PATH and names the
exchange and the course in ATTENTION_HUB_EXCHANGE and ATTENTION_HUB_COURSE_ID. Submissions go by the student's
system account, whose name nbgrader reads from the operating system: a student cannot submit in another's name
(a folder made by hand in the inbound under another's name is refused by the instructor's collect,
autograder.hub.collect.OwnCollect).

nbgrader's submit leaves the submission's folder open to all (777, its files 644), hidden only by a name nobody
can list: anyone who learns the name can read it and replace its files. ``PrivateSubmit`` (nbgrader's plugin
point) closes it to other students: folders 750, files 640. Its files belong to the student's group or, through
the inbound's set-group-id bit, the instructor's; the hub puts the instructor in every student's group, so the
instructor's collect reads them and no other student does. It is defined here because the student's sandbox
shows this folder, not the repository's packages.
"""

import os
from pathlib import Path

from nbgrader.exchange.default.submit import ExchangeSubmit

c = get_config()  # noqa: F821 (nbgrader provides it)
c.CourseDirectory.course_id = os.environ["ATTENTION_HUB_COURSE_ID"]
c.Exchange.root = os.environ["ATTENTION_HUB_EXCHANGE"]


class PrivateSubmit(ExchangeSubmit):
    """nbgrader's submit, then the submission closed to other students: folders 750, files 640."""

    def copy_files(self):
        super().copy_files()
        submission = Path(self.inbound_path) / self.assignment_filename
        for path in [submission, *submission.rglob("*")]:
            if not path.is_symlink():
                path.chmod(0o750 if path.is_dir() else 0o640)


c.ExchangeFactory.submit = PrivateSubmit
