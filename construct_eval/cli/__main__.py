"""``python -m construct_eval.cli``: the same as the ``construct-eval`` command."""

import sys

from construct_eval.cli import main

sys.exit(main())
