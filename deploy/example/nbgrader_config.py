# The settings of deploy/z2jh/values.yaml and of the example manifests in docs/deploy.md: the c.Cluster.* lines a
# course's nbgrader_config.py holds on a cluster (autograder.cluster.settings). The commit in the images' tags is
# an example; use the one `git rev-parse HEAD` names when you build them (deploy/Dockerfile).
c = get_config()  # noqa: F821 - traitlets' configuration files are run with get_config defined

c.Cluster.sandbox = "auto"
c.Cluster.user_namespaces = True
c.Cluster.network_policies = True
c.Cluster.namespace = "attention"
c.Cluster.grader_image = "registry.example.edu/attention-grader:0123456789abcdef0123456789abcdef01234567"
c.Cluster.notebook_image = "registry.example.edu/attention-notebook:0123456789abcdef0123456789abcdef01234567"
c.Cluster.student_image = "registry.example.edu/attention-student:0123456789abcdef0123456789abcdef01234567"
c.Cluster.cpu = "1"
c.Cluster.memory = "2Gi"
c.Cluster.student_cpu = "1"
c.Cluster.student_memory = "2G"
