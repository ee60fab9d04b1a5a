"""Lane-accounting vocabulary shared by every strategy (DESIGN.md "Lane accounting")."""

WARP_SIZE = 32

# Column order of the per-level arrays every strategy's count_lanes returns.
LANE_FIELDS = ("warp_iterations", "total_lanes", "useful_lanes", "ua_lanes", "ur_lanes", "idle_lanes")
