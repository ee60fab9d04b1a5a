import dataclasses
"""The critical-path launch time (opmachine.critical): hand-computed phases, the loads per slot, and invariants."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmachine.critical import CriticalPathModel, launch_time, per_slot, scheduler_ns
from opmachine.memory import slot_loads
from opmachine.instructions import hop_cycles
from opmachine.kernels import ANI, NF1, NF2, OP, JobTrace, parse_kernel
from opmachine.predict import fixed_ns, predict_bfs
from opmachine.profile import load_profile
from simdmodel.errors import InputError
from simdmodel.load import load_graph


def _model(latency=(100.0, 200.0, 300.0), peak=(0.0, 0.0, 0.0), same=0.0):
    """Latency per outcome, the same for any sector count; peak ns per sector per server."""
    table = np.zeros((3, 33))
    table[:, 1:] = np.asarray(latency)[:, None]
    return CriticalPathModel(("L2H", "RBH", "RBM"), np.array([0, 1, 2]), table, np.asarray(peak, float), same)


def _loads(jobs, l2_sectors_per_job=1.0, latency_per_job=100.0, hot_per_job=0.0):
    jobs = np.asarray(jobs, dtype=np.float64)
    sectors = np.zeros((3, jobs.size))
    sectors[0] = jobs * l2_sectors_per_job
    return jobs, sectors, jobs * latency_per_job, jobs * hot_per_job


def test_one_warp_alone_waits_its_latency():
    assert launch_time(*_loads([5]), _model(peak=(1.0, 1.0, 1.0))) == (500.0, "latency")


def test_equal_warps_are_bandwidth_bound_as_eq4():
    # 4 slots x 10 jobs of 2 sectors at 50 ns a sector: R = max(100, 4 x 2 x 50) = 400 ns a job
    assert launch_time(*_loads([10, 10, 10, 10], 2.0), _model(peak=(50.0, 0, 0))) == (4000.0, "L2H")


def test_load_falls_as_warps_finish():
    # slots of 1 and 3 jobs: one job each at n = 2, then two more at n = 1
    assert launch_time(*_loads([1, 3]), _model())[0] == 300.0  # latency only: W_max x 100
    # bandwidth 80 ns a job per active slot: max(100, 2 x 80) = 160, then max(100, 80) = 100 twice
    assert launch_time(*_loads([1, 3]), _model(peak=(80.0, 0, 0))) == (360.0, "latency")


def test_hot_sector_has_its_own_bandwidth():
    # 8 slots x 4 jobs, each on the hot sector, 20 ns per request there: R = max(100, 8 x 20)
    model = _model(peak=(1.0, 0, 0), same=20.0)
    assert launch_time(*_loads([4] * 8, hot_per_job=1.0), model) == (4 * 160.0, "L2S")


def test_no_jobs_no_time():
    assert launch_time(*_loads([0, 0]), _model()) == (0.0, "none")


def _trace(jobs):
    """jobs: (server, warp, [sectors]) in generation order."""
    ptr = np.cumsum([0] + [len(s) for _, _, s in jobs]).astype(np.int64)
    return JobTrace(np.array([j[0] for j in jobs], dtype=np.int8), np.array([j[1] for j in jobs], dtype=np.int32),
                    ptr, np.concatenate([np.asarray(s, dtype=np.int32) for _, _, s in jobs]),
                    max(j[1] for j in jobs) + 1)


def test_slot_loads_by_hand():
    # warp 0: a load of 3 L2 hits and 1 row miss, then a store; warp 1: one row-buffer hit load
    trace = _trace([(NF2, 0, [1, 2, 3, 9]), (OP, 0, [4]), (NF1, 1, [5])])
    order = np.arange(3)
    outcome = np.array([0, 0, 0, 2, 0, 1], dtype=np.int8)
    model = _model()
    model.latency_ns[0, 3] = 120.0
    counter = np.zeros(16, dtype=np.int32)
    jobs, sectors, latency, _ = slot_loads(trace, (order, trace.sectors, outcome), 8, model, counter)
    assert jobs.tolist() == [2, 1]
    assert sectors.tolist() == [[4, 0], [0, 1], [1, 0]]
    assert latency.tolist() == [300.0, 200.0]  # slowest class of the load; the store adds nothing
    assert counter.sum() == 0


def test_slot_loads_fold_warps_onto_slots_and_count_the_hot_sector():
    # 6 warps on 4 slots, every warp re-reads sector 7 (ANI) and reads one sector of its own
    jobs = [(ANI, w, [7]) for w in range(6)] + [(NF1, w, [10 + w]) for w in range(6)]
    trace = _trace(jobs)
    order = np.arange(len(jobs))
    outcome = np.zeros(trace.sectors.size, dtype=np.int8)
    counted = slot_loads(trace, (order, trace.sectors, outcome), 4, _model(), np.zeros(32, dtype=np.int32))
    assert counted[0].tolist() == [4, 4, 2, 2]
    assert counted[3].tolist() == [2, 2, 1, 1]  # warps 4 and 5 run on slots 0 and 1


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.floats(1.0, 500.0))
def test_uniform_latency_without_bandwidth_takes_wmax_latencies(jobs, latency):
    busy = max(jobs)
    time, bound = launch_time(*_loads(jobs, latency_per_job=latency), _model())
    assert time == pytest.approx(busy * latency)
    assert bound == ("latency" if busy else "none")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 50), min_size=1, max_size=40), st.floats(0.0, 4.0), st.floats(0.0, 100.0),
       st.floats(0.0, 1.0))
def test_time_scales_with_the_work_and_bounds_hold(jobs, per_job, peak, hot):
    model = _model(peak=(peak, 0, 0), same=10.0)
    loads = _loads(jobs, per_job, 150.0, hot)
    time, _ = launch_time(*loads, model)
    doubled, _ = launch_time(*(2 * x for x in loads), model)
    assert doubled == pytest.approx(2 * time)
    assert time >= max(jobs) * 150.0 * (1 - 1e-12)  # latency bound: the longest slot
    assert time >= sum(jobs) * per_job * peak * (1 - 1e-12)  # bandwidth bound: every sector served


def test_model_from_profiles():
    h200 = load_profile("h200")
    model = CriticalPathModel.from_profile(h200)
    one_warp = h200.curves["row_miss_one_warp"]
    # the chase's own issue, 18.75 cycles a hop (its unrolled body: load 2 + add 5 + mask 5 + address 6, and
    # the loop's counter over 16 hops), leaves the one-warp latencies
    chase = 18.75 * h200.instructions.cycle_ns
    assert hop_cycles("sm_90") == 18.75
    assert model.latency_ns[2, 32] == pytest.approx(32 * one_warp(32.0) - chase)
    # an L2 hit: [l2_partitions]' near and far latencies, interpolated in log2 of the sectors
    near, far = h200.l2_partitions.near_ns, h200.l2_partitions.far_ns
    assert model.latency_ns[0, 1] == pytest.approx(near[0] - chase) and model.far_ns[1] == pytest.approx(far[0] - chase)
    assert model.latency_ns[0, 32] == pytest.approx(near[-1] - chase)
    assert model.far_ns[3] == pytest.approx(far[1] + np.log2(1.5) * (far[2] - far[1]) - chase)
    without = CriticalPathModel.from_profile(dataclasses.replace(h200, l2_partitions=None))
    assert without.latency_ns[0, 1] == pytest.approx(h200.curves["l2_hit"].ns[0] - chase)
    assert not without.far_ns.any()
    assert model.peak_ns.tolist() == [h200.curves[c].ns[-1] for c in ("l2_hit", "row_hit", "row_miss")]
    assert model.same_sector_ns == h200.curves["l2_same"].ns[-1]
    k40c = CriticalPathModel.from_profile(load_profile("k40c"))  # no one-warp or same-sector curves
    assert set(k40c.latency_ns[2, 1:]) == {load_profile("k40c").curves["row_miss"](1.0)}
    assert k40c.same_sector_ns == 0.0
    # [memory_mix]: on both Hopper profiles two of the DRAM's classes together took about their summed times
    assert model.dram_classes_add and CriticalPathModel.from_profile(load_profile("h100")).dram_classes_add
    assert not k40c.dram_classes_add
    assert not CriticalPathModel.from_profile(dataclasses.replace(h200, memory_mix=None)).dram_classes_add


def test_time_models_share_every_count_and_differ_only_in_time():
    graph, profile = load_graph("rmat:scale=10,ef=8,seed=2"), load_profile("h200")
    critical = predict_bfs(graph, 1, parse_kernel("sm-4"), profile, l2_model="setassoc").per_level
    eq4 = predict_bfs(graph, 1, parse_kernel("sm-4"), profile, l2_model="setassoc", time_model="eq4").per_level
    counts = [c for c in critical.columns if c not in ("predicted_ns", "bottleneck", "fixed_ns")]
    assert critical[counts].equals(eq4[counts])
    # a compaction's constant: the measured time at the graph's size less the model's own for it, which
    # only the critical path gives; Eq. 4 keeps the one-node constant
    assert critical["fixed_ns"].tolist() == [fixed_ns(profile, phase, graph.n) for phase in critical["phase"]]
    assert eq4["fixed_ns"].tolist() == [fixed_ns(profile, phase, 1) for phase in eq4["phase"]]
    floor = np.array([fixed_ns(profile, phase) for phase in critical["phase"]])
    assert (critical["predicted_ns"].to_numpy() > floor).all()
    assert set(critical["bottleneck"]) <= {"L2H", "RBH", "RBM", "L2S", "latency"}
    with pytest.raises(InputError, match="unknown time model"):
        predict_bfs(graph, 1, parse_kernel("sm-4"), profile, time_model="amdahl")



def test_every_sector_passes_through_the_l2():
    # 4 slots x 10 jobs, each 2 L2 hits and 2 row misses; the L2 serves all 4 sectors at 10 ns (40 ns a
    # job), DRAM its 2 misses at 1 ns: R = max(latency 100, 4 x 40) = 160 ns a job, bound by the L2
    jobs = np.full(4, 10.0)
    sectors = np.vstack([2 * jobs, 0 * jobs, 2 * jobs])
    time, bound = launch_time(jobs, sectors, jobs * 100.0, 0 * jobs, _model(peak=(10.0, 0.0, 1.0)))
    assert (time, bound) == (10 * 160.0, "L2H")


def test_row_buffer_classes_that_add_share_one_dram_demand():
    # 4 slots x 10 jobs, each 1 L2 hit, 2 row hits and 2 row misses; L2 10 ns a sector, row hits 12, misses 15.
    # Side by side the misses' server bounds a job at 2 x 15 = 30 ns (row hits 24, the L2 5 x 10 = 50): the L2,
    # R = 4 x 50. Classes that add: the DRAM's 2 x 12 + 2 x 15 = 54 ns a job > 50, R = 4 x 54, named for the
    # larger share (the misses'); the L2 stays apart, an L2 hit is not added
    jobs = np.full(4, 10.0)
    sectors = np.vstack([jobs, 2 * jobs, 2 * jobs])
    side_by_side = _model(peak=(10.0, 12.0, 15.0))
    assert launch_time(jobs, sectors, jobs * 100.0, 0 * jobs, side_by_side) == (10 * 200.0, "L2H")
    adding = dataclasses.replace(side_by_side, dram_classes_add=True)
    assert launch_time(jobs, sectors, jobs * 100.0, 0 * jobs, adding) == (10 * 216.0, "RBM")
    # no row-buffer hits: the sum is the misses' own demand, so nothing changes
    misses = np.vstack([jobs, 0 * jobs, 4 * jobs])
    assert launch_time(jobs, misses, jobs * 100.0, 0 * jobs, adding) == \
        launch_time(jobs, misses, jobs * 100.0, 0 * jobs, side_by_side) == (10 * 240.0, "RBM")


def test_the_words_slice_serves_its_share_of_the_l2_then_its_atomics():
    # 4 slots x 10 jobs, each 2 L2 hits (10 ns a sector at the L2's peak: 20 ns a job) and one atomic on the
    # word (15 ns each): the word's slice serves its share of the 2 sectors, then the atomic, 35 ns a job,
    # R = max(latency 50, 4 x 35) = 140 ns, bound by L2A; side by side with the L2 it would be 4 x 20 = 80
    jobs = np.full(4, 10.0)
    sectors = np.vstack([2 * jobs, 0 * jobs, 0 * jobs])
    model = dataclasses.replace(_model(peak=(10.0, 0.0, 0.0)), atomic_ns=15.0)
    assert launch_time(jobs, sectors, jobs * 50.0, 0 * jobs, model, atomics=jobs) == (10 * 140.0, "L2A")
    # one of the two sectors a job served by the L1: 15 + 10 = 25 ns a job at the slice, R = 4 x 25 = 100
    assert launch_time(jobs, sectors, jobs * 50.0, 0 * jobs, model, atomics=jobs, slice_sectors=jobs) == \
        (10 * 100.0, "L2A")
    # no atomic on the word: the slice serves nothing apart, the L2 bounds (4 x 20 = 80 ns a job)
    assert launch_time(jobs, sectors, jobs * 50.0, 0 * jobs, model, atomics=0 * jobs, slice_sectors=jobs) == \
        launch_time(jobs, sectors, jobs * 50.0, 0 * jobs, model) == (10 * 80.0, "L2H")


def _mean_value_ns(latency, issue, alu, warps):
    """One scheduler's closed network by the textbook recursion (Lazowska et al., Algorithm 6.1): stations
    issue and ALU, a delay of the latency less their demands; R at whole warps, interpolated between."""
    delay = max(latency - issue - alu, 0.0)
    if delay + issue + alu <= 0.0:
        return 0.0
    whole = int(np.floor(warps))
    residence = [delay + issue + alu]  # [0]: a lone warp's (R(1)), below one warp
    queued = (0.0, 0.0)
    for customers in range(1, whole + 2):
        at = (issue * (1.0 + queued[0]), alu * (1.0 + queued[1]))
        total = delay + at[0] + at[1]
        queued = (customers / total * at[0], customers / total * at[1])
        residence.append(total)  # [customers]: R(customers)
    return residence[whole] + (warps - whole) * (residence[whole + 1] - residence[whole])


def _launch_time_arrays(jobs, sectors, latency, hot, model, instructions=None):
    """The launch time with whole-array operations, as the model's docstring states it: the reference
    for `launch_time`'s compiled loop (which must give the same floats)."""
    busy = jobs > 0
    if not busy.any():
        return 0.0, "none"
    count, path, shared, alu = instructions if instructions is not None else (np.zeros_like(jobs),) * 4
    jobs, sectors, latency, hot = jobs[busy], sectors[:, busy], latency[busy], hot[busy]
    count, path, shared, alu = count[busy], path[busy], shared[busy], alu[busy]
    by = np.argsort(jobs, kind="stable")
    jobs, sectors, latency, hot, count, path, shared, alu = (jobs[by], sectors[:, by], latency[by], hot[by],
                                                             count[by], path[by], shared[by], alu[by])
    counts, first = np.unique(jobs, return_index=True)
    steps = np.diff(counts, prepend=0.0)
    active = (jobs.size - first).astype(np.float64)
    active_jobs = np.cumsum(jobs[::-1])[::-1][first]

    def active_mean(values):
        return np.cumsum(values[..., ::-1], axis=-1)[..., ::-1][..., first] / active_jobs

    means = active_mean(sectors)
    per_server = sum(model.visits[:, o:o + 1] * means[o] for o in range(3))
    demand = np.vstack([per_server * model.peak_ns[:, None], active_mean(hot) * model.same_sector_ns,
                        active_mean(count) * model.issue_ns, active_mean(shared) * model.shared_ns,
                        active_mean(alu) * model.alu_ns])
    local = np.array([len(model.servers) + 1, len(model.servers) + 3]) if model.schedulers else np.zeros(0, int)
    others = np.delete(demand, local, axis=0)  # the issue and ALU rows are a scheduler's own with schedulers
    others_at = np.delete(np.arange(len(demand)), local)
    most, top = others.max(axis=0), others_at[others.argmax(axis=0)]
    if model.dram_classes_add:  # one DRAM demand: each row-buffer outcome's sectors at its server's peak, summed
        parts = means[1:] * model.peak_ns[model.server_of[1:]][:, None]
        mixed = parts[0] + parts[1]
        top = np.where(mixed > most, model.server_of[1:][parts.argmax(axis=0)], top)
        most = np.maximum(most, mixed)
    bandwidth = active * most
    wait = active_mean(latency + path)
    phase_ns = steps * np.maximum(wait, bandwidth)
    names = np.array((*model.servers, "L2S", "ISSUE", "SHM", "ALU", "latency"))
    bound = np.where(wait >= bandwidth, len(names) - 1, top)
    if model.schedulers:
        issue, alu = demand[local[0]], demand[local[1]]
        mva = np.array([_mean_value_ns(w, i * model.schedulers, a * model.schedulers, n / model.schedulers)
                        for w, i, a, n in zip(wait, issue, alu, active)])
        busier = np.where(issue >= alu, names.tolist().index("ISSUE"), names.tolist().index("ALU"))
        local_bound = np.where(wait >= active * np.maximum(issue, alu), len(names) - 1, busier)
        phase_ns = steps * np.where(mva >= bandwidth, mva, bandwidth)
        bound = np.where(mva >= bandwidth, local_bound, top)
    share = np.bincount(bound, weights=phase_ns, minlength=len(names))
    return float(phase_ns.sum()), str(names[int(share.argmax())])


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**32 - 1), st.booleans(), st.booleans(), st.booleans(),
       st.sampled_from([0.0, 1.0, 3.0, 7.5]))
def test_launch_time_equals_its_array_form(slots, seed, rows, with_instructions, dram_classes_add, schedulers):
    rng = np.random.default_rng(seed)
    jobs = rng.integers(0, 6, slots).astype(np.float64)  # few distinct counts: ties and idle slots
    sectors = rng.integers(0, 40, (3, slots)) * (jobs > 0)
    latency, hot = rng.uniform(0, 900, slots) * jobs, rng.integers(0, 3, slots) * jobs
    instructions = tuple(rng.uniform(0, 500, slots) * jobs for _ in range(4)) if with_instructions else None
    model = CriticalPathModel(("L2H", "RBH", "RBM") if rows else ("L2H", "DRAM"),
                              np.array([0, 1, 2] if rows else [0, 1, 1]), np.zeros((3, 33)),
                              rng.uniform(0.01, 5.0, 3 if rows else 2), float(rng.uniform(0, 30)),
                              issue_ns=float(rng.uniform(0, 2)), shared_ns=float(rng.uniform(0, 2)),
                              alu_ns=float(rng.uniform(0, 2)), dram_classes_add=dram_classes_add,
                              schedulers=schedulers)
    assert launch_time(jobs, sectors, latency, hot, model, instructions) == \
        _launch_time_arrays(jobs, sectors, latency, hot, model, instructions)


def test_scheduler_network_by_hand():
    # one station of 1 ns a job, a delay of 1 ns (latency 2 less the demand): R(1) = 2, a warp queued 1/2 of
    # the time; R(2) = 1 + 1 x (1 + 1/2) = 2.5, where both bounds give max(2, 2 x 1) = 2
    assert scheduler_ns(2.0, 1.0, 0.0, 2.0) == 2.5
    assert scheduler_ns(2.0, 1.0, 0.0, 1.5) == 2.25  # between R(1) and R(2)
    assert scheduler_ns(2.0, 1.0, 0.0, 0.3) == 2.0  # a lone warp waits its latency
    assert scheduler_ns(0.5, 1.0, 0.0, 1.0) == 1.0  # a latency below the demand is no delay at all
    # two stations: ALU 2 ns, issue 1 ns, delay 0: R(1) = 3, queues 1/3 and 2/3; R(2) = 1 x 4/3 + 2 x 5/3
    assert scheduler_ns(3.0, 1.0, 2.0, 2.0) == pytest.approx(14 / 3)


@settings(max_examples=300, deadline=None)
@given(*(st.floats(0, top, allow_subnormal=False) for top in (1e4, 100, 100, 64)))
def test_scheduler_network_lies_between_its_bounds(latency, issue, alu, warps):
    r = scheduler_ns(latency, issue, alu, warps)
    busier = max(issue, alu)
    assert r >= max(latency, issue + alu, warps * busier) * (1 - 1e-12)
    assert r <= max(latency, issue + alu) + max(warps - 1, 0) * (issue + alu) * (1 + 1e-12) + 1e-9
    assert scheduler_ns(latency, issue, alu, warps + 1) >= r * (1 - 1e-12)  # more warps never speed one up


def test_launch_queues_for_its_schedulers_issue_slot():
    # 2 slots x 10 jobs on one scheduler, each job 110 ns of issue and 200 ns of latency in all: the bounds give
    # max(200, 2 x 110) = 220 ns a job; the network R(2) = 90 + 110 x (1 + 110 / 200) = 260.5, bound by issue
    jobs = np.full(2, 10.0)
    sectors = np.zeros((3, 2))
    instructions = (jobs * 110.0, 0 * jobs, 0 * jobs, 0 * jobs)
    bounds = dataclasses.replace(_model(), issue_ns=1.0)
    assert launch_time(jobs, sectors, jobs * 200.0, 0 * jobs, bounds, instructions) == (2200.0, "ISSUE")
    network = dataclasses.replace(bounds, schedulers=1.0)
    time, bound = launch_time(jobs, sectors, jobs * 200.0, 0 * jobs, network, instructions)
    assert (time, bound) == (pytest.approx(2605.0), "ISSUE")
    # the memory's bound still wins where it is the larger: 2 x 150 ns a job of L2 sectors
    sectors[0] = jobs * 150.0
    assert launch_time(jobs, sectors, jobs * 200.0, 0 * jobs, dataclasses.replace(network, peak_ns=np.array(
        [1.0, 0.0, 0.0])), instructions) == (3000.0, "L2H")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(0, 1e6, allow_nan=False), max_size=40), st.integers(1, 16))
def test_per_slot_sums_are_the_bincounts_of_the_warps_on_each_slot(values, slots):
    per_warp = np.array(values, dtype=np.float64)
    expected = np.bincount(np.arange(per_warp.size) % slots, weights=per_warp, minlength=slots)
    got = per_slot(per_warp, slots)
    assert got.dtype == np.float64 and got.shape == (slots,)
    assert np.array_equal(got, expected)
