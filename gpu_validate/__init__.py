"""BFS kernels on a real GPU through CuPy, with counters. Not implemented yet: see DESIGN.md."""
