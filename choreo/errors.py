"""One exception tree for the whole project.

Every error carries a short machine-readable ``code`` so that the CLI, the API
and failed jobs can all report the same reason. ``transient`` tells retrying
middleware whether trying again could help (an S3 timeout) or not (a corrupt
song). Errors are permanent unless their class or the one raising them says
otherwise: only an outage is worth retrying.
"""

from __future__ import annotations

__all__ = [
    "AudioError",
    "ChoreoError",
    "ConflictError",
    "EngineError",
    "ExportError",
    "NotFoundError",
    "ParameterError",
    "StorageError",
    "TooLargeError",
]


class ChoreoError(Exception):
    """Root of every error Choreo raises on purpose.

    Parameters
    ----------
    message : what went wrong, for people
    code : the machine-readable reason, instead of the class's
    transient : whether trying again later could succeed, instead of the class's (for an
        error class that holds both outages and refusals, such as :class:`StorageError`)
    """

    code: str = "choreo_error"
    transient: bool = False

    def __init__(self, message: str, *, code: str | None = None, transient: bool | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        if transient is not None:
            self.transient = transient

    @property
    def message(self) -> str:
        return str(self)


class ParameterError(ChoreoError, ValueError):
    """A caller passed an option or value that is out of range or unknown."""

    code = "bad_parameter"


class AudioError(ChoreoError):
    """A song cannot be danced: corrupt, unsupported, silent, too short or too long."""

    code = "bad_audio"


class EngineError(ChoreoError):
    """A motion engine failed to load or to run."""

    code = "engine_error"


class ExportError(ChoreoError):
    """A motion could not be written in the requested format."""

    code = "export_error"


class StorageError(ChoreoError):
    """Object storage refused or failed an operation.

    Permanent unless raised with ``transient=True``: a refusal (403, a bad key name, a prefix
    without '/') fails the same way every time; only an outage (storage unreachable, a timeout,
    a 5xx, throttling) is worth retrying.
    """

    code = "storage_error"


class ConflictError(ChoreoError):
    """The request does not fit the object's state (publish a job twice, cancel a finished one)."""

    code = "conflict"


class NotFoundError(ChoreoError):
    """No such object for the caller: another team's object is reported exactly like a missing one."""

    code = "not_found"


class TooLargeError(ParameterError):
    """An input is larger than the configured limit."""

    code = "too_large"
