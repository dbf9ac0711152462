"""Messages for clients without the service's insides: no paths, URLs, hosts or storage keys.

Error text is written for the people who read the logs, and it names temporary
files, bucket keys and server addresses. :func:`public_message` keeps its sense
for a client: a path becomes its file name, a URL or an address ``<hidden>``,
and a storage key its last part. The logs keep the original.
"""

from __future__ import annotations

import re

__all__ = ["public_message", "safe_url"]

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://[^\s'\"<>]+", re.IGNORECASE)
_ADDRESS = re.compile(
    r"\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b|\b[a-z][a-z0-9.-]*:\d{2,5}\b|\[[0-9a-f:]+\](?::\d+)?",
    re.IGNORECASE,
)
_PATH = re.compile(r"(?:(?<=^)|(?<=[\s'\"(=]))(?:/[^\s'\"/()]+)+/?")
_STORAGE_KEY = re.compile(r"\b(?:jobs|tracks|teams|uploads|batches|routines|keys)/[^\s'\"]+")


def _last_part(match: re.Match[str]) -> str:
    return match.group(0).rstrip("/").rsplit("/", 1)[-1]


def public_message(text: str) -> str:
    """``text`` with every absolute path, URL, network address and storage key reduced or hidden."""
    text = _URL.sub("<hidden>", text)
    text = _ADDRESS.sub("<hidden>", text)
    text = _PATH.sub(_last_part, text)
    return _STORAGE_KEY.sub(_last_part, text)


def safe_url(url: str) -> str:
    """``url`` without its ``user:password@`` part, for log lines."""
    return re.sub(r"(?<=://)[^/@\s]*@", "***@", url, count=1)
