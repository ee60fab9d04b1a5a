"""The CPU mapping of the BFS operator machine (seed 003 §4-5).

On a CPU the operator machine's jobs are memory instructions and the servers are the levels of the
cache hierarchy: an instruction completes at the level that serves it (seed 003 §4). This package
models the topology-driven BFS of Listing 1, serial and on T threads, one concept per module:

- `kernel`: Listing 1 itself, the kernel that is timed (`listing1_round`) and its recording twin
  (`traced_rounds`), on arrays laid out by `opmachine.layout.CPU_LAYOUT`;
- `trace`: `cpu_trace`, every memory instruction of the whole BFS in program order, as cache-line
  ids, with the operator-machine server that issued it;
- `hierarchy`: `cache_levels`, the level (L1, L2, L3, memory) that serves each access, by a
  set-associative LRU per level or by one fully associative stack-distance pass;
- `events`: `round_events`, what each round does that the loop's measured costs (`loop_costs`,
  a profile's `[loop]`) price: nodes, frontier nodes, edges, stores, mispredicted branches;
- `predict`: `predict_cpu`, completions per level and round, visits, the bottleneck and the
  predicted round time (the loop's costs; without them N * max_i V_i S_i, Eq. 1-2, MLP 1 as in
  §5), and `predict_cpu_threads`, the multi-threaded loop on T cores (the slowest thread);
- `measure`: `measure_cpu_rounds`, the same kernel timed round by round on this machine,
  `measure_cpu_counters`, its cache counts round by round (`perf_events`: the process's own
  counters), for counters mode (`predict_cpu_counted`), and `perf_support` / `perf_cache_counts`,
  whole-BFS hardware cache counts through `perf stat`.

`python -m opmachine.cpu --graph SPEC --source S [--skip-bfs]` runs one serial BFS on the measured
kernel.
"""
from .hierarchy import LEVEL_NAMES, MODELS, cache_levels
from .kernel import kernel_arrays
from .measure import PERF_EVENTS, main, measure_cpu_counters, measure_cpu_rounds, perf_cache_counts, perf_support
from .perf_events import CountersUnavailable, PerfCounters
from .predict import miss_errors, predict_cpu, predict_cpu_counted, predict_cpu_threads, service_times_ns
from .trace import CPUTrace, cpu_layout, cpu_trace, thread_traces

__all__ = [
    "CPUTrace", "CountersUnavailable", "PerfCounters", "measure_cpu_counters", "miss_errors", "predict_cpu_counted", "LEVEL_NAMES", "MODELS", "PERF_EVENTS", "cache_levels", "cpu_layout", "cpu_trace",
    "kernel_arrays", "main", "measure_cpu_rounds", "perf_cache_counts",
    "perf_support", "predict_cpu", "predict_cpu_threads", "service_times_ns", "thread_traces",
]
