"""``python -m construct_eval.demo``: run the demo (see :mod:`construct_eval.demo.pipeline`)."""

import sys

from construct_eval.demo.pipeline import main

sys.exit(main())
