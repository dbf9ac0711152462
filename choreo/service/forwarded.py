"""The client's address: the connection's peer, or what trusted proxies say it forwarded.

Behind a load balancer every request's peer is the balancer, so limits kept per
peer address would put every client in one bucket. A proxy appends the address
it received the request from to ``X-Forwarded-For``; only the proxies named in
``CHOREO_TRUSTED_PROXIES`` are believed. The header is read from its right end
(the entry the nearest proxy wrote) leftwards, past every trusted proxy: the
first address that is not one is the client. Anything left of it was written by
the client itself and is ignored, so a client cannot pick its own address by
sending the header; from a peer that is not a trusted proxy the header is not
read at all.
"""

from __future__ import annotations

from collections.abc import Sequence
from ipaddress import IPv4Network, IPv6Network, ip_address, ip_network

__all__ = ["Network", "client_address", "parse_networks"]

Network = IPv4Network | IPv6Network
"""One trusted proxy's address or block."""


def parse_networks(text: str) -> tuple[Network, ...]:
    """The networks of a comma-separated list of addresses and CIDR blocks (``10.0.0.0/8, ::1``).

    Raises
    ------
    ValueError
        Naming the entry that is neither an address nor a network.
    """
    networks = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        try:
            networks.append(ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{entry!r} is not an IP address or CIDR network") from None
    return tuple(networks)


def _trusted(address: str, trusted: Sequence[Network]) -> bool:
    try:
        parsed = ip_address(address)
    except ValueError:
        return False
    return any(parsed in network for network in trusted)


def client_address(peer: str, forwarded_for: str | None, trusted: Sequence[Network]) -> str:
    """The address a request came from: ``peer`` unless it is a trusted proxy that forwarded it.

    An entry of the header that is not an address ends the walk: the last trusted hop is
    then the client (a trusted proxy never writes one, so only a client can have).
    """
    if not forwarded_for or not _trusted(peer, trusted):
        return peer
    client = peer
    for hop in reversed([h.strip() for h in forwarded_for.split(",")]):
        try:
            ip_address(hop)
        except ValueError:
            return client
        client = hop
        if not _trusted(hop, trusted):
            return hop
    return client
