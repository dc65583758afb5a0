"""``python -m construct_eval.studies.findings``: write (or ``--check``) the findings."""

import sys

from construct_eval.studies.findings import main

sys.exit(main())
