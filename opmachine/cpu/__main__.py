"""`python -m opmachine.cpu --graph SPEC --source S [--skip-bfs]`: one serial BFS on the measured kernel."""
import sys

from .measure import main

sys.exit(main())
