# A Python Kopf operator for e2e/peering's TestHandOver: the handlers that
# the test's kopf-go operator registers too, under the same ids. Each run of
# a handler appends one line to the ledger file $HANDOVER_LEDGER, in one
# write to a file opened for appending:
#
#     <operator> <handler id> <object name> retry=<n>
#
# where <operator> is $HANDOVER_OPERATOR. flaky_fn fails on its first
# attempt for an object whose spec.flaky is true, with a TemporaryError
# whose delay is $HANDOVER_DELAY seconds: the retry is pending when the
# operator stops, for the next operator to run.
import os
from typing import Any

import kopf

LEDGER = os.environ['HANDOVER_LEDGER']
OPERATOR = os.environ['HANDOVER_OPERATOR']
DELAY = float(os.environ['HANDOVER_DELAY'])


def record(handler: str, name: str, retry: int) -> None:
    with open(LEDGER, 'a') as f:
        f.write(f'{OPERATOR} {handler} {name} retry={retry}\n')


@kopf.on.create('kopfexamples')
def create_fn(name: str, retry: int, **_: Any) -> None:
    record('create_fn', name, retry)


@kopf.on.create('kopfexamples')
def flaky_fn(name: str, spec: kopf.Spec, retry: int, **_: Any) -> None:
    record('flaky_fn', name, retry)
    if spec.get('flaky') and retry == 0:
        raise kopf.TemporaryError('fails once', delay=DELAY)


@kopf.on.update('kopfexamples', field='spec.field')
def field_fn(name: str, retry: int, **_: Any) -> None:
    record('field_fn/spec.field', name, retry)
