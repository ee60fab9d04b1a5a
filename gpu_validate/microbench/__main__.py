"""`python -m gpu_validate.microbench`: see `cli.main`."""
import sys

from .cli import main

sys.exit(main())
