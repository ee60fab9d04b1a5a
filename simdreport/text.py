"""The report's prose, shared by index.html and report.md: settings, a reading guide, per-graph facts."""
from __future__ import annotations

from .collect import GraphData, fastest_cpu_ns


def settings_lines(settings: dict) -> list[str]:
    """What was run and how: date, command, GPU profile and its provenance, L2 model, sources."""
    provenance = settings.get("provenance") or {}
    if settings["curves_measured"]:
        curves = (f"service curves measured on {provenance.get('device', 'the device')}"
                  + (f" ({provenance['date']})" if provenance.get("date") else ""))
    else:
        curves = "service curves derived from published latency and bandwidth figures, not measured"
    suite = ("the built-in suite (generated stand-ins for seed 000's Table 1 classes)" if settings["default_suite"]
             else settings.get("graphs_from") or "the graphs given on the command line")
    lines = [
        f"{settings['date']}, simdmodel {settings['version']}: {settings['command']}",
        f"Graphs: {suite}.",
        f"GPU profile {settings['gpu']} ({settings['gpu_description']}); {curves}.",
        f"Settings: {settings['defaults']}.",
        *([f"CPU profile {settings['cpu']} ({settings['cpu_description']}): the same BFS predicted on that CPU, "
           "serial and on all its measured threads (opmachine.cpu, the loop's measured costs, caches warm)."]
          if settings.get("cpu") else []),
        (f"Lane accounting: BFS from {settings['sources']} seeded random sources per graph (seed {settings['seed']}), "
        "frontiers in ascending vertex order (a bitmask-then-compact kernel), CTA size 256 for scan."),
        ("Operator-machine prediction: one BFS per graph (its first source, or the first measured source where GPU "
        "measurements exist) with every mapping (topo, sm-1 .. sm-32, ws, scan), ranked by predicted time: the pick "
        "is the fastest, whatever its ME; its figures are drawn beside topo's. The critical-path time model (the "
        "load falls as warps finish); the L2 kept from launch to launch (warm), as a BFS's back-to-back launches "
        "find it."),
    ]
    return lines


def reading_guide() -> list[str]:
    """Short definitions a reader needs (seed 000 §4, seed 003 §3 and §6)."""
    return [
        ("Lane slots = 32 x warp iterations. ME (mapping efficiency) = useful lanes / lane slots; UA = lanes wasted "
        "inside a group (a vertex's last partial iteration), UR = lanes of groups that wait for the warp's "
        "heaviest group, idle = lanes no group owns. ME + UA + UR + idle = 1."),
        ("sm-S gives each frontier vertex S lanes (seed 000); ws strides a warp over its 32 vertices' joined edge "
        "lists (warp segmentation); scan strides a 256-thread CTA over its vertices' joined edge lists; swc "
        "(seed 001's scan+warp+CTA gathering) gives a list longer than the CTA to the whole CTA, one longer than a "
        "warp to its warp and scans the rest, and splits its waste by phase (tables/lanes_by_phase.csv)."),
        "Depth = mean number of BFS levels (level 0 included) over the sources.",
        ("A job is one warp-level memory instruction of an operator-machine server. Predicted time: while n warp "
        "slots are busy, each job takes max(latency of those slots' loads, n x the largest sectors-per-job x peak "
        "service time), summed as the slots finish, plus the launch overhead (seed 003 Eq. 4 with the load "
        "followed through the launch). Bottleneck: what bounds most of that time: L2H = L2 hits, RBH = DRAM "
        "row-buffer hits, RBM = DRAM row-buffer misses, L2S = one hot L2 sector, L2A = atomics on one word (a "
        "queue counter), L2W = bitmask lookups that store their byte back, ISSUE = instruction issue, ALU = the "
        "ALU pipe (integer and logic instructions, at half the issue rate on Hopper), SHM = shared memory, "
        "latency = the last warps' own loads and instructions."),
        ("A round of a data-driven kernel is two launches: the expansion by the mapping and the compaction of the "
        "level array into the next sorted frontier."),
    ]


def phase_sentence(phases) -> str:
    """Where each phased mapping's lanes go: each phase's share of its lane slots and of its UA."""
    parts = []
    for mapping, rows in phases.groupby("mapping", sort=False):
        shares = ", ".join(f"{row.phase} {row.share:.0%} of the slots (UA {row.ua:.1%})"
                           for row in rows.itertuples() if row.share == row.share and row.share > 0)
        if shares:
            parts.append(f" {mapping}'s lanes by phase: {shares}.")
    return "".join(parts)


def graph_facts(data: GraphData) -> str:
    """One paragraph of the numbers that matter for a graph."""
    info = data.info
    ranking = data.ranking
    topo = data.opm_summary["topo"]
    stands_for = f"Stands for {data.graph.stands_for}. " if data.graph.stands_for else ""
    facts = (f"{stands_for}n = {data.n:,} vertices, m = {data.m:,} directed edges, "
             f"mean degree {data.m / data.n:.1f} (min {info['degree_min']}, median {info['degree_median']:g}, "
             f"max {info['degree_max']:,}), mean depth {info['avg_depth']:.1f} levels over {len(data.sources)} "
             f"sources. Highest ME: {data.best['mapping']} ({data.best['me']:.3f}); best group size: "
             f"{data.best_group['mapping']} ({data.best_group['me']:.3f}). Pick, by predicted time of a BFS from "
             f"source {data.opm_source}: {ranking.why()} topo: {topo['predicted_ns'] / 1e6:.3g} ms. A "
             f"level-adaptive kernel (each level's fastest mapping) would be {ranking.adaptive_gain():.2f}x as fast "
             "as the pick alone.")
    facts += phase_sentence(data.lane_phases)
    if data.cpu:
        cpu = data.cpu
        threads = (f", on {cpu['threads']} threads {cpu['threads_ns'] / 1e6:.3g} ms" if cpu["threads"] else "")
        fastest = fastest_cpu_ns(cpu)
        gpu = ranking.pick["predicted_ns"]
        verdict = (f"the GPU's pick is {fastest / gpu:.3g}x as fast" if gpu <= fastest else
                   f"the CPU is {gpu / fastest:.3g}x as fast as the GPU's pick")
        facts += (f" On CPU {cpu['profile']} the same BFS is predicted at {cpu['serial_ns'] / 1e6:.3g} ms serial "
                  f"(busiest: {cpu['bottleneck']}){threads}: {verdict}.")
    return facts
