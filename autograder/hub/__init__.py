"""The course on JupyterHub: accounts, the exchange and the hub's processes (``launch``), the hub's own
Python (``runtime``), nbgrader's collect made safe (``collect``) and sockets across namespaces (``bridge``).

Hands collected submissions to the class command and Submits to the grading service.
"""
