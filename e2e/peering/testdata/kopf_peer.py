# A Python Kopf operator for e2e/peering's TestRealKopf: Kopf's own
# examples/06-peering/example.py, run with `python -m kopf run`.
from typing import Any

import kopf


@kopf.on.create('kopfexamples')
def create_fn(**_: Any) -> None:
    pass
