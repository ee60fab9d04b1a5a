"""Slow, obviously-correct reference of `opmachine.cte`'s launch times.

Every virtual warp is simulated step by step (lanes decrement their tasks' fine-grained work, a
CTA's fine tasks are dealt out in 32-task blocks), and every launched warp walks its grid-stride
loop over units, adding its virtual warps' times to its physical slot; the launch takes the
busiest slot.
"""
from __future__ import annotations

W = 32


def tree_steps(width):
    """Halvings until one lane holds the reduction."""
    steps = 0
    while width > 1:
        width = (width + 1) // 2
        steps += 1
    return steps


def warp_1d(tasks, t_map, t_red):
    """One lane per task; every step each busy lane maps and reduces one fine task."""
    remaining = list(tasks)
    time = 0.0
    while any(r > 0 for r in remaining):
        time += t_map + t_red
        remaining = [max(r - 1, 0) for r in remaining]
    return time


def warp_sw(tasks, S, t_map, t_red):
    """One group of S lanes per task: S fine tasks a step per group, then the groups' reduction."""
    remaining = list(tasks)
    steps = 0
    while any(r > 0 for r in remaining):
        steps += 1
        remaining = [max(r - S, 0) for r in remaining]
    return steps * t_map + tree_steps(S) * t_red


def unit_cte(tasks, cta, t_map, t_red):
    """Per warp of the unit: its 32-task blocks of the unit's concatenated fine tasks x round cost."""
    warps = cta // W
    fine = sum(tasks)
    blocks = [0] * warps
    k = 0
    while k * W < fine:
        blocks[k % warps] += 1
        k += 1
    return [b * (t_map + t_red * tree_steps(W)) for b in blocks]


def virtual_warps(loads, model, width, t_map, t_red):
    """Time of each virtual warp, unit by unit (a CTE unit's warps in order): model "1d", "sw"
    (width S) or "cte" (width C); and the warps a unit has."""
    loads = [int(x) for x in loads]
    if model == "cte":
        unit_tasks, unit_warps = width, width // W
    else:
        unit_tasks, unit_warps = (W if model == "1d" else W // width), 1
    times = []
    for first in range(0, len(loads), unit_tasks):
        unit = loads[first:first + unit_tasks]
        if model == "1d":
            times.append(warp_1d(unit, t_map, t_red))
        elif model == "sw":
            times.append(warp_sw(unit, width, t_map, t_red))
        else:
            times.extend(unit_cte(unit, width, t_map, t_red))
    return times, unit_warps


def makespan(times, warps, physical, unit_warps=1):
    """Each launched warp walks its grid-stride loop over the units (unit slot w // unit_warps,
    warp w % unit_warps of each unit) and adds its virtual warps' times to slot w % physical."""
    units = len(times) // unit_warps
    slots = warps // unit_warps
    busy = [0.0] * physical
    for w in range(warps):
        slot, j = divmod(w, unit_warps)
        if slot >= slots:
            continue  # a launched warp no unit slot owns
        for u in range(slot, units, slots):
            busy[w % physical] += times[u * unit_warps + j]
    return max(busy)


def launch(loads, model, width, t_map, t_red, warps, physical):
    """Busiest physical slot of a launch of `loads` under `model`."""
    times, unit_warps = virtual_warps(loads, model, width, t_map, t_red)
    return makespan(times, warps, physical, unit_warps)
