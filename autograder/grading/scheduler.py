"""Reaching a Dask scheduler: its address, and for a tls:// one the certificates (distributed.security.Security).

    access = SchedulerAccess("tls://10.0.0.5:8786", ca_file=ca, cert_file=cert, key_file=key)
    client = connect(access)                        # a Client, or GradingError saying what to fix

A scheduler on a cluster is reached over TLS as Dask deploys it (``dask scheduler --tls-ca-file ... --tls-cert ...
--tls-key ...``): this process shows its certificate and checks the scheduler's against the CA, and every
connection is encrypted (``require_encryption``). A tls:// address without certificates, certificates with a plain
tcp:// address, or a file that cannot be read is refused before anything is sent. The class run
(autograder.grading.dispatch) and the grading service (autograder.service.app) take the same four options.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from distributed import Client
from distributed.security import Security

from autograder.grading.task import GradingError

FLAGS = (  # the command line's options, the names Dask's own CLI gives them (dask scheduler, dask worker)
    ("--tls-ca-file", "ca_file", "the CA that signed the scheduler's and workers' certificates (PEM)"),
    ("--tls-cert", "cert_file", "this process's certificate (PEM), signed by that CA"),
    ("--tls-key", "key_file", "its private key (PEM)"),
)


@dataclass(frozen=True)
class SchedulerAccess:
    """A scheduler's address and, for tls://, the three certificate files this process connects with."""

    address: str
    ca_file: Path | None = None
    cert_file: Path | None = None
    key_file: Path | None = None

    def __str__(self) -> str:
        return self.address

    def files(self) -> dict[str, Path | None]:
        return {flag: getattr(self, name) for flag, name, _ in FLAGS}

    def security(self) -> Security | None:
        """The Security to connect with: None for tcp://; raises GradingError when the address and the files do
        not agree, or a file cannot be read."""
        given = {flag: path for flag, path in self.files().items() if path is not None}
        if not self.address.startswith("tls://"):
            if given:
                raise GradingError(
                    f"{', '.join(given)} given but the scheduler's address {self.address} is not tls://: "
                    "write it as tls://host:port, or leave out the certificates"
                )
            return None
        missing = [flag for flag, path in self.files().items() if path is None]
        if missing:
            raise GradingError(f"the scheduler {self.address} speaks TLS: give {', '.join(missing)} as well")
        for flag, path in given.items():
            try:
                Path(path).read_bytes()
            except OSError as error:
                raise GradingError(f"{flag} {path} cannot be read ({error.strerror or error})") from None
        return Security(
            tls_ca_file=str(self.ca_file),
            tls_client_cert=str(self.cert_file),
            tls_client_key=str(self.key_file),
            require_encryption=True,
        )


def connect(access: SchedulerAccess | str, *, timeout: str = "20s") -> Client:
    """A Client of the scheduler ``access`` names (an address alone: tcp://); GradingError with what to do when it
    cannot be reached."""
    access = access if isinstance(access, SchedulerAccess) else SchedulerAccess(access)
    security = access.security()
    try:
        return Client(access.address, security=security, timeout=timeout)
    except (OSError, TimeoutError) as error:
        over = "over TLS (is the CA the one that signed its certificate?)" if security else ""
        raise GradingError(
            f"cannot reach the Dask scheduler at {access.address} {over}({error}): start one with `dask scheduler`, "
            "or leave out --scheduler to grade on this machine"
        ) from None


def add_flags(parser) -> None:
    """The three --tls-* options on an argparse parser."""
    for flag, name, help_text in FLAGS:
        parser.add_argument(flag, dest=name, type=Path, default=None, help=f"with a tls:// --scheduler: {help_text}")


def access_from(args, address: str | None) -> SchedulerAccess | None:
    """The SchedulerAccess of parsed options (add_flags') and ``address``; None without an address (GradingError
    when certificates are given without one)."""
    if address is None:
        given = [flag for flag, name, _ in FLAGS if getattr(args, name, None) is not None]
        if given:
            raise GradingError(f"{', '.join(given)} given without --scheduler: name the tls:// scheduler too")
        return None
    access = SchedulerAccess(address, **{name: getattr(args, name, None) for _, name, _ in FLAGS})
    access.security()  # refused here, before any step runs, when the address and the files do not agree
    return access
