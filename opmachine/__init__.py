"""opmachine: the operator-machine queueing model of BFS (seed 003), predicting time per round.

- Operator machines as data and their operational analysis (`OperatorMachine`, `analyze`,
  `what_if`), and the BFS machine of seed 003 Fig. 1 with per-round completions.
- Warp-level GPU jobs of each modelled kernel (`topo`, `sm-S`, `ws`, `scan`), coalesced into
  32-byte sectors and run through L2 (stack-distance LRU or set-associative) and row-buffer models.
- Hardware profiles (`load_profile`), load and MLP, service curves (`Curve`), the bottleneck and the
  predicted time per launch (`predict_bfs`; by default the critical-path time of `critical`,
  `time_model="eq4"` for seed 003's Eq. 4), and counters mode (`predict_bfs(counters=read_counters(path))`,
  `counted_result`: the same time model fed with Nsight Compute's counts); one simulation timed on
  several profiles that share its geometry (`predict_bfs_profiles`, for what-ifs of bandwidth or
  launch cost).
- Which mapping to use: every kernel ranked by predicted BFS time, with its lane waste and
  bottleneck beside it (`rank_mappings`, `Ranking`).
- The CPU mapping of seed 003 §4 (`predict_cpu`).
- Seed 004's instruction-only cost analysis of 1D, sub-warp and CTE decomposition (Eqs. 4.1-4.3)
  on the same launches, as a comparator (`CteCosts`, `cte_rounds`).
"""
from .bfs_machine import SERVERS, bfs_completions, bfs_operator_machine, completions_of
from .counters import counted_result, read_counters
from .cte import CteCosts, cte_rounds
from .cpu import predict_cpu
from .kernels import Kernel, Launch, parse_kernel
from .machine import OperationalResult, OperatorMachine, Server, littles_law_load, response_time_ns
from .predict import OpmResult, memory_prediction, predict_bfs, predict_bfs_profiles
from .recommend import Ranking, candidate_kernels, rank_mappings
from .profile import CPUProfile, Curve, GPUProfile, ProfileError, available_profiles, load_profile

__all__ = [
    "CPUProfile", "CteCosts", "Curve", "GPUProfile", "Kernel", "Launch", "OperationalResult", "OperatorMachine",
    "OpmResult", "ProfileError", "SERVERS", "Server", "available_profiles", "bfs_completions",
    "bfs_operator_machine", "completions_of", "counted_result", "cte_rounds", "littles_law_load", "load_profile", "memory_prediction",
    "parse_kernel", "predict_bfs", "predict_bfs_profiles", "predict_cpu", "rank_mappings", "Ranking",
    "candidate_kernels", "read_counters", "response_time_ns",
]
