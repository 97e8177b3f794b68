"""Kopf's own e2e test of one example (tests/e2e/test_examples.py::test_all_examples_are_runnable
at Kopf 1.44.6), run on the real Kopf without pytest, to compare kopf-go's port with Kopf itself.

The steps, timings and assertions are the test's: KopfRunner(['run', '--all-namespaces',
'--standalone', '--verbose', example.py]) with default_backoff=1 and server_timeout=10; wait for the
startup stop words; kubectl apply obj.yaml; wait for the creation's; kubectl delete; wait for the
deletion's; stop; then Kopf's assertions on the runner's output. caplog is a handler on the root
logger; E2E_* marks are read with ast as Kopf's E2EParser reads them. It prints the output, each
step with its time, each assertion, and exits 1 if one fails.

Usage (a control plane with Kopf's CRD applied, e.g. `make cluster`; Kopf's examples from a Kopf
checkout at 1.44.6; kubectl on PATH; the directory holding examples/ as the working directory):

    KUBECONFIG=... PYTHONPATH=<dir with the versions.py shim's sitecustomize>:<kopf-1.44.6>/debian12-shims:<kopf-1.44.6> \\
        /usr/bin/python3 hack/kopf-example.py examples/15-timers

(e2e/peering/testdata/kopfsite holds that sitecustomize: Kopf 1.44.6's source lacks versions.py.)
"""
import ast
import collections
import logging
import pathlib
import re
import subprocess
import sys
import time

import kopf
from kopf.testing import KopfRunner


class Caplog(logging.Handler):
    def __init__(self):
        super().__init__(0)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def sleep_till_stopword(caplog, delay=None, patterns=None, *, interval=None):  # Kopf's, as it is
    patterns = list(patterns or [])
    delay = delay or (10.0 if patterns else 3.0)
    interval = interval or min(1.0, max(0.1, delay / 10.))
    started = time.perf_counter()
    found = False
    while not found and time.perf_counter() - started < delay:
        for message in list(caplog.messages):
            if any(re.search(pattern, message) for pattern in patterns or []):
                found = True
                break
        else:
            time.sleep(interval)
    return found


def marks(source):
    """The E2E_* configs and the decorators' presence, as Kopf's E2EParser finds them."""
    tree = ast.parse(source)
    configs = {t.id: ast.literal_eval(n.value) for n in ast.walk(tree)
               if isinstance(n, (ast.Assign, ast.AnnAssign))
               for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
               if isinstance(t, ast.Name) and t.id.startswith('E2E_')}
    decorators = [(d, isinstance(d.func.value, ast.Attribute)) for n in ast.walk(tree)
                  if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) for d in n.decorator_list
                  if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute)
                  and (isinstance(d.func.value, ast.Name) and d.func.value.id == 'kopf' or
                       isinstance(d.func.value, ast.Attribute) and d.func.value.attr == 'on')]
    has = lambda name: any(d.func.attr == name for d, _ in decorators)
    optional = [ast.literal_eval(k.value) for d, on in decorators if on and d.func.attr == 'delete'
                for k in d.keywords if k.arg == 'optional']
    return configs, has, has('delete') and not any(optional)


def main(exampledir):
    example_py = pathlib.Path(exampledir) / 'example.py'
    configs, has, mandatory_delete = marks(example_py.read_text())
    caplog = Caplog()
    logging.getLogger().addHandler(caplog)
    logging.getLogger().setLevel(logging.DEBUG)
    t0 = time.perf_counter()
    step = lambda what: print(f'[{time.perf_counter() - t0:7.3f}] STEP {what}', flush=True)
    wait = lambda name, default=None: sleep_till_stopword(
        caplog, configs.get(f'E2E_{name}_TIME_LIMIT'), configs.get(f'E2E_{name}_STOP_WORDS') or default)

    settings = kopf.OperatorSettings()
    settings.execution.default_backoff = 1
    settings.watching.server_timeout = 10
    with KopfRunner(['run', '--all-namespaces', '--standalone', '--verbose', str(example_py)],
                    timeout=60, settings=settings) as runner:
        step(f"startup: stop word found: {wait('STARTUP', ['Client is configured'])}")
        subprocess.run("kubectl apply -f examples/obj.yaml", shell=True, check=True, timeout=10, capture_output=True)
        step('applied')
        step(f"creation: stop word found: {wait('CREATION')}")
        subprocess.run("kubectl delete -f examples/obj.yaml", shell=True, check=True, timeout=10, capture_output=True)
        step('deleted')
        step(f"deletion: stop word found: {wait('DELETION')}")
    step(f"cleanup: stop word found: {wait('CLEANUP', ['Hung tasks', 'Root tasks'])}")
    print('==== runner.output ====\n' + runner.output)

    failed = []
    def check(ok, what):
        print(('PASS ' if ok else 'FAIL ') + what)
        if not ok:
            failed.append(what)
    out = runner.output
    check(runner.exception is None, f'runner.exception is None: {runner.exception!r}')
    check(runner.exit_code == 0, f'runner.exit_code == 0: {runner.exit_code}')
    for cond, line in [(mandatory_delete, 'Adding the finalizer'), (has('create'), 'Creation is in progress:'),
                       (mandatory_delete, 'Deletion is in progress:'),
                       (any(has(n) for n in ['create', 'update', 'delete']), 'Deleted, really deleted')]:
        if cond:
            check(f'[default/kopf-example-1] {line}' in out, f'{line!r} in the output')
    if not configs.get('E2E_ALLOW_TRACEBACKS'):
        check('Traceback (most recent call last):' not in out, 'no traceback')
    names = re.findall(r"'(.+?)' succeeded", out)
    want = configs.get('E2E_SUCCESS_COUNTS')
    if want is not None:
        counts = collections.Counter(n for n in names if n in want)
        check(counts == want, f'successes {dict(counts)} == E2E_SUCCESS_COUNTS {want}')
    else:
        counts = collections.Counter(names)
        check(set(counts.values()) == {1}, f'set(successes.values()) == {{1}}: successes {dict(counts)}')
    names = re.findall(r"'(.+?)' failed (?:permanently|with an exception and will stop)", out)
    want = configs.get('E2E_FAILURE_COUNTS')
    counts = collections.Counter(n for n in names if want is None or n in want)
    check(counts == (want or {}), f'permanent failures {dict(counts)} == {want or {}}')
    print('RESULT:', 'FAILED' if failed else 'PASSED')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
