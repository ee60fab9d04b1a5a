"""`python -m simdreport`: the `simdmodel` command line."""
import sys

from .cli import main

sys.exit(main())
