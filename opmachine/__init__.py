"""Operator-machine queueing model of BFS (seed 003). Not implemented yet: see DESIGN.md."""
