"""hub/jupyterhub_config.py loaded as JupyterHub loads it, and the spawner its hooks read: for the tests of what the
hub does before a server starts (test_launch's, test_exchange's)."""

from __future__ import annotations

import logging
from pathlib import Path

from autograder.hub import launch as hub


class Spawner:
    """What the configuration's pre_spawn_hook reads and sets on JupyterHub's spawner."""

    def __init__(self, name: str):
        self.user = type("User", (), {"name": name})()
        self.environment, self.cmd, self.port, self.hub_connect_url = {}, ["jupyterhub-singleuser"], 0, None
        self.log = logging.getLogger("tests.hub_config")


def hub_config(state: Path, monkeypatch):
    """The configuration JupyterHub would load for a hub on ``state`` (its ATTENTION_HUB_* set as the hub sets them);
    the test is skipped with the reason where the hub cannot run (no JupyterHub, which the file imports, no proxy)."""
    import pytest
    from traitlets.config.loader import PyFileConfigLoader

    if hub.why_unavailable() is not None:
        pytest.skip(hub.why_unavailable())

    for name, value in hub.Hub(state, ["student1"]).environment().items():
        if name.startswith("ATTENTION_HUB_"):
            monkeypatch.setenv(name, value)
    return PyFileConfigLoader(hub.CONFIG.name, path=str(hub.CONFIG.parent)).load_config()


def pre_spawn_hook(state: Path, monkeypatch):
    """hub/jupyterhub_config.py's pre_spawn_hook."""
    return hub_config(state, monkeypatch).Spawner.pre_spawn_hook
