"""A class graded on a dask-gateway cluster: one asked for with an image, cores and memory, scaled between bounds.

    access = GatewayAccess("https://gateway.school.edu", image="REGISTRY/attention-grader:<commit>", cores=1,
                           memory=2, minimum=1, maximum=20)
    client, cluster = access.open()        # GradingError with what to fix when the gateway refuses or is out of reach

dask-gateway is how a JupyterHub deployment hands out Dask clusters: the gateway's server starts the scheduler and
the workers (pods, with the image asked for) and scales them (``cluster.adapt(minimum, maximum)``: Dask's adaptive
scaling, more workers while tasks wait, fewer when idle). The names of the options are the server's own
(``c.Backend.cluster_options``); OPTION_NAMES are the ones dask-gateway's documented examples use, and
``option_names`` renames them for a server that calls them otherwise. Workers still need the grader's exact commit:
the class run refuses the others (autograder.grading.dispatch.usable_workers).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from autograder.grading.task import GradingError

OPTION_NAMES = {"image": "image", "cores": "worker_cores", "memory": "worker_memory"}  # ours: the server's


def whole(value):
    """2.0 as 2 (a server's Integer option refuses a float), any other value as it is."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


@dataclass(frozen=True)
class GatewayAccess:
    """A dask-gateway's address, the cluster asked of it, and the bounds its workers are scaled between."""

    address: str
    image: str | None = None  # the workers' image (deploy/Dockerfile, target grader); None: the server's default
    cores: float | None = None  # each worker's cores; None: the server's default
    memory: float | None = None  # each worker's memory in GiB; None: the server's default
    minimum: int = 1  # workers kept while idle
    maximum: int = 4  # workers at most, however long the queue
    auth: str | None = None  # dask-gateway's authentication ("jupyterhub", "kerberos", "basic"); None: its config's
    option_names: dict = field(default_factory=lambda: dict(OPTION_NAMES))

    def __str__(self) -> str:
        return f"the dask-gateway at {self.address}"

    def asked(self) -> dict:
        """{the server's option name: value} for what was given; GradingError when the bounds or sizes make no
        sense."""
        if not 0 <= self.minimum <= self.maximum or self.maximum < 1:
            raise GradingError(
                f"--adapt {self.minimum},{self.maximum}: the workers' bounds must be 0 <= minimum <= maximum, "
                "maximum at least 1"
            )
        for name in ("cores", "memory"):
            value = getattr(self, name)
            if value is not None and value <= 0:
                raise GradingError(f"--gateway-{name} {value:g}: it must be more than 0")
        given = {ours: whole(getattr(self, ours)) for ours in OPTION_NAMES if getattr(self, ours) is not None}
        return {self.option_names[ours]: value for ours, value in given.items()}

    def fill(self, offered):
        """The server's cluster options (a dask_gateway.options.Options) with what was asked set; GradingError
        naming the option and what the server offers when it has no such option or refuses the value."""
        for name, value in self.asked().items():
            if name not in offered:
                raise GradingError(
                    f"{self} offers no option {name!r} (it offers {', '.join(sorted(offered)) or 'none'}): "
                    "leave it out, or name the server's own (GatewayAccess.option_names)"
                )
            try:
                offered[name] = value
            except (TypeError, ValueError) as error:  # the server's bounds: above its maximum, not one of its choices
                raise GradingError(f"{self} refuses {name} = {value!r}: {error}") from None
        return offered

    def open(self):
        """(a Client, the GatewayCluster): a new cluster with the options asked, adapting between the bounds;
        it shuts down when closed. GradingError with what to do when the gateway cannot be reached or refuses."""
        from dask_gateway import Gateway  # the cluster extra's: only a class run on a gateway needs it

        self.asked()  # the bounds and sizes refused before anything is sent
        gateway = Gateway(self.address, auth=self.auth)
        try:
            options = self.fill(gateway.cluster_options())
            cluster = gateway.new_cluster(cluster_options=options, shutdown_on_close=True)
        except GradingError:
            gateway.close()
            raise
        except Exception as error:  # noqa: BLE001 - HTTP errors, refused authentication, a server's own error
            gateway.close()
            raise GradingError(
                f"{self} cannot start a cluster ({type(error).__name__}: {error}): check the address and the "
                "authentication (dask-gateway's gateway.auth), or use --scheduler"
            ) from None
        cluster.adapt(minimum=self.minimum, maximum=self.maximum)
        return cluster.get_client(set_as_default=False), cluster


def bounds(text: str) -> tuple[int, int]:
    """``--adapt MIN,MAX`` as (minimum, maximum); argparse's type, so a mistake is said at the flag."""
    try:
        minimum, maximum = (int(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not MIN,MAX (two whole numbers, e.g. 1,20)") from None
    return minimum, maximum


FLAGS = (  # the command line's options: (flag, GatewayAccess field or "adapt", argparse's type, metavar, help)
    ("--gateway", "address", str, "URL", "a dask-gateway's address: grade on a new cluster of it, not --scheduler"),
    ("--gateway-image", "image", str, "IMAGE", "with --gateway: the workers' image (deploy/Dockerfile, target grader)"),
    ("--gateway-cores", "cores", float, "N", "with --gateway: each worker's cores"),
    ("--gateway-memory", "memory", float, "GIB", "with --gateway: each worker's memory in GiB"),
    (
        "--adapt",
        "adapt",
        bounds,
        "MIN,MAX",
        "with --gateway: workers scaled with the queue between these (default 1,4)",
    ),
)


def access_from(args) -> GatewayAccess | None:
    """The GatewayAccess of parsed options (FLAGS, dest ``gateway_<field>``), None without --gateway; GradingError
    when --gateway's companions come without it, or with --scheduler."""
    given = {name: getattr(args, f"gateway_{name}", None) for _, name, _, _, _ in FLAGS}
    if given["address"] is None:
        stray = [flag for flag, name, _, _, _ in FLAGS if given[name] is not None]
        if stray:
            raise GradingError(f"{', '.join(stray)} given without --gateway: name the dask-gateway too")
        return None
    if getattr(args, "scheduler", None):
        raise GradingError("--gateway and --scheduler both given: grade on one of them")
    minimum, maximum = given.pop("adapt") or (1, 4)
    access = GatewayAccess(**{name: value for name, value in given.items() if value is not None}, minimum=minimum,
                           maximum=maximum)  # fmt: skip
    access.asked()  # refused here, before any step runs
    return access
