"""The course on Kubernetes: the objects a cluster needs, generated from the course's settings, one module per job.

- settings: ClusterSettings, ``c.Cluster.*`` in the course's nbgrader_config.py (images, bounds, the sandbox's way);
- choice: which of the two sandboxes the cluster's grading uses, refused closed when neither holds;
- objects: what every pod of the course shares (labels, bounds, a locked container, a policy);
- notebook_pod: a short-lived locked-down pod per notebook, and the NetworkPolicy that cuts it off;
- worker_pod: a grading worker whose user namespace is its own (hostUsers: false), where bubblewrap runs;
- hub_values: the Zero to JupyterHub values file (deploy/z2jh/values.yaml), made and checked here;
- __main__: ``python -m autograder.cluster``, the manifests and the values file written out.

It hands on objects, not actions: the official Kubernetes client's models (``pip install -e '.[cluster]'``), which
``kubectl apply`` or Zero to JupyterHub's chart reads; nothing here talks to a cluster. This package's own module
imports nothing.
"""
