"""Operator machines as data, and their operational analysis (seed 003 §2-3, Eq. 1-3).

An operator machine is a queueing network whose servers are the steps of a graph program
(input, filters, lookups, operator) and whose jobs flow between them along routes (seed 003
§3.1). Operational analysis (Denning & Buzen, seed 003 ref. [5]) needs only counts that can be
measured: jobs N, completions C_i per server and a service time S_i per visit. From them follow
the visits V_i = C_i / N, the demands D_i = V_i * S_i, the bottleneck B (Eq. 1 and 3, the server
of largest demand), the throughput X0 = 1 / D_B (Eq. 2, forced flow law), the utilizations
U_i = X0 * D_i (utilization law; U_B = 1) and the time N * D_B the N jobs take, startup and
shutdown ignored.

Service times carry `_ns` in their names; any consistent unit (cycles, as in seed 003 §3.2)
works, and the results are then in that unit.

Building a machine for another graph program takes a few lines. A push-style edge sweep (every
node is a job, looks up its edges, applies an operator to each) has three servers:

>>> sweep = OperatorMachine(
...     "edge sweep",
...     (Server("ANI", "all nodes input"), Server("EDL", "edge destination lookup"),
...      Server("OP", "operator")),
...     (("in", "ANI"), ("ANI", "EDL"), ("EDL", "OP"), ("OP", "EDL"), ("OP", "out")),
... )
>>> result = sweep.analyze(jobs=4, completions={"ANI": 4, "EDL": 10, "OP": 10},
...                        service_ns={"ANI": 1.0, "EDL": 2.0, "OP": 1.0})
>>> result.bottleneck, result.demand_ns["EDL"], result.time_ns   # V_EDL = 2.5, D = 2.5 * 2
('EDL', 5.0, 20.0)
>>> faster = result.what_if(EDL=0.5)     # what if edge lookups were 4x faster?
>>> faster.bottleneck, faster.time_ns    # OP now dominates: D_OP = 2.5 * 1, 4 jobs * 2.5
('OP', 10.0)
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from simdmodel.errors import InputError

OUTSIDE = ("in", "out")


@dataclass(frozen=True)
class Server:
    """One server of an operator machine: a step of the graph program (seed 003 §3.1)."""

    name: str
    description: str = ""


@dataclass(frozen=True)
class OperatorMachine:
    """A queueing network of named servers and the routes jobs take between them (seed 003 §3).

    `routes` are (from, to) pairs of server names; "in" and "out" stand for the outside. They
    document the job flow (Figure 1 of seed 003); operational analysis itself needs only the
    completions per server, so a route does not enter `analyze`.
    """

    name: str
    servers: tuple[Server, ...]
    routes: tuple[tuple[str, str], ...] = ()

    def __post_init__(self):
        servers = tuple(self.servers)
        routes = tuple(tuple(route) for route in self.routes)
        object.__setattr__(self, "servers", servers)
        object.__setattr__(self, "routes", routes)
        label = self.name or "operator machine"
        if not servers:
            raise InputError(f"{label}: a machine needs at least one server")
        seen = set()
        for server in servers:
            if not isinstance(server, Server):
                raise InputError(f"{label}: servers must be Server objects, got {server!r}")
            if not isinstance(server.name, str) or not server.name:
                raise InputError(f"{label}: server names must be non-empty strings")
            if server.name in OUTSIDE:
                raise InputError(f"{label}: server name {server.name!r} is reserved for the outside")
            if server.name in seen:
                raise InputError(f"{label}: server name {server.name!r} appears twice")
            seen.add(server.name)
        for route in routes:
            if len(route) != 2:
                raise InputError(f"{label}: a route is a (from, to) pair, got {route!r}")
            for end in route:
                if end not in seen and end not in OUTSIDE:
                    raise InputError(f"{label}: route {route!r} names unknown server {end!r}")

    def server_names(self) -> tuple[str, ...]:
        """Server names in machine order (the order that breaks bottleneck ties)."""
        return tuple(server.name for server in self.servers)

    def analyze(self, jobs: float, completions: Mapping[str, float],
                service_ns: Mapping[str, float]) -> OperationalResult:
        """Operational analysis of one run of `jobs` jobs (seed 003 §2 Eq. 1-2, §3.2 Eq. 3).

        `completions` maps server name to C_i (a server left out has C_i = 0); `service_ns` maps
        server name to the service time per visit S_i, required for every server with C_i > 0.
        Ties for the bottleneck go to the first server in machine order.
        """
        return _analyze(self.server_names(), jobs, completions, service_ns, self.name)


@dataclass(frozen=True)
class OperationalResult:
    """Visits, demands, bottleneck, throughput and utilizations of one analyzed run.

    The per-server dicts (`completions`, `visits`, `demand_ns`, `utilization`) list every server
    in machine order; `service_ns` holds the service times given.
    """

    jobs: float
    completions: dict
    visits: dict
    service_ns: dict
    demand_ns: dict
    bottleneck: str
    throughput_per_ns: float
    utilization: dict
    time_ns: float

    def what_if(self, **service_ns: float) -> OperationalResult:
        """The same jobs and completions with some service times replaced (seed 003 §3.2)."""
        merged = dict(self.service_ns)
        merged.update(service_ns)
        return _analyze(tuple(self.completions), self.jobs, self.completions, merged, "what-if")

    def table(self) -> pd.DataFrame:
        """One row per server: completions, visits, service_ns, demand_ns, utilization, bottleneck."""
        names = list(self.completions)
        return pd.DataFrame({
            "server": names,
            "completions": [float(self.completions[s]) for s in names],
            "visits": [self.visits[s] for s in names],
            "service_ns": [float(self.service_ns.get(s, math.nan)) for s in names],
            "demand_ns": [self.demand_ns[s] for s in names],
            "utilization": [self.utilization[s] for s in names],
            "bottleneck": [s == self.bottleneck for s in names],
        })


def _check_count(value, what: str) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{what} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise InputError(f"{what} must be finite and >= 0, got {value!r}")
    return number


def _analyze(names: tuple[str, ...], jobs, completions: Mapping[str, float],
             service_ns: Mapping[str, float], label: str) -> OperationalResult:
    label = label or "operator machine"
    known = set(names)
    for what, mapping in (("completions", completions), ("service time", service_ns)):
        if not isinstance(mapping, Mapping):
            raise InputError(f"{label}: {what} must be a mapping of server name to number")
        for key in mapping:
            if key not in known:
                raise InputError(f"{label}: {what} given for unknown server {key!r} "
                                 f"(servers: {', '.join(names)})")
    n_jobs = _check_count(jobs, f"{label}: jobs")
    if n_jobs <= 0:
        raise InputError(f"{label}: jobs must be > 0, got {jobs!r}")
    done = {s: _check_count(completions.get(s, 0), f"{label}: completions of {s}") for s in names}
    given = {s: _check_count(v, f"{label}: service time of {s}") for s, v in service_ns.items()}
    for s in names:
        if done[s] > 0 and s not in given:
            raise InputError(f"{label}: server {s} has {done[s]:g} completions but no service time")
    visits = {s: done[s] / n_jobs for s in names}
    demand = {s: visits[s] * given[s] if done[s] > 0 else 0.0 for s in names}
    bottleneck = names[0]
    for s in names:
        if demand[s] > demand[bottleneck]:  # strict: ties stay with the first server
            bottleneck = s
    top = demand[bottleneck]
    if top <= 0:
        raise InputError(f"{label}: every server demand V_i*S_i is zero, so throughput is unbounded")
    # U_i = X0 * D_i = D_i / D_B, computed as a quotient so that U_B is exactly 1.
    utilization = {s: demand[s] / top for s in names}
    return OperationalResult(
        jobs=n_jobs,
        completions=done,
        visits=visits,
        service_ns=given,
        demand_ns=demand,
        bottleneck=bottleneck,
        throughput_per_ns=1.0 / top,
        utilization=utilization,
        time_ns=n_jobs * top,
    )


def littles_law_load(throughput_per_ns: float, response_ns: float) -> float:
    """Jobs in the system n = X * R (Little's law; seed 003 §6.5 estimates load this way)."""
    x = _check_count(throughput_per_ns, "throughput")
    r = _check_count(response_ns, "response time")
    return x * r


def response_time_ns(load: float, throughput_per_ns: float) -> float:
    """Mean response time R = n / X (Little's law solved for R)."""
    n = _check_count(load, "load")
    x = _check_count(throughput_per_ns, "throughput")
    if x <= 0:
        raise InputError(f"throughput must be > 0, got {throughput_per_ns!r}")
    return n / x
