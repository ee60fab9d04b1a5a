"""gpu_validate: the modelled BFS kernels on a real GPU, beside the model's predictions.

- `bfs.GpuBfs`: CUDA C kernels (`cuda/`, one per kernel) run through CuPy level by level, checked
  against the CPU BFS, timed per launch, with lane and job counters from an instrumented build.
- `ncu`: Nsight Compute counters per launch; `microbench`: service curves S(m) for a profile;
  `overheads`: the per-launch constants; `profile_gpu`: the whole profile of this GPU in one run;
  `device`: what the GPU is, and the profile that describes it (`profile_for_device`).
- `validate`: the stages of prediction beside measurement, `compare`: their arithmetic (exact
  checks, counter errors, time errors, the summary), `pipeline.validate_graph`: measure ->
  predict -> compare for one graph as one call (`simdmodel validate` and the committed validation
  run under `results/`, `python -m simdreport.validation_suite`, both call it).

Importing this package does not import CuPy; the GPU is needed only to measure.
"""
