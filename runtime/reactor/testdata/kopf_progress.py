# Prints the progress annotations that Kopf 1.44.6 writes, cycle by cycle,
# in the scenarios of fidelity_test.go: Kopf's own process_changing_cause
# runs with its clock frozen at 2000-01-01T00:00:00Z plus each cycle's time
# (as in the tests' synctest bubble), and every patch is merged into the body
# for the next cycle. Only the standard library is needed; the few imports of
# third-party packages on the way are stubbed. From an extracted source tree:
#   git -C <kopf repo> archive 1.44.6 kopf | tar -x -C /tmp/k
#   cd /tmp/k && python3 <this file>
import os, sys, tempfile
_stubs = tempfile.mkdtemp()
os.makedirs(os.path.join(_stubs, 'pythonjsonlogger'))
for _path, _text in {
    'iso8601.py': 'import datetime\ndef parse_date(val, default_timezone=None):\n    return datetime.datetime.fromisoformat(val)\n',
    'aiohttp.py': 'class _D:\n    def __init__(self, *a, **k): pass\ndef __getattr__(name):\n    return type(name, (_D,), {})\n',
    'pythonjsonlogger/__init__.py': '',
    'pythonjsonlogger/jsonlogger.py': 'import logging\nRESERVED_ATTRS = ()\nclass JsonFormatter(logging.Formatter):\n    pass\n',
}.items():
    with open(os.path.join(_stubs, _path), 'w') as _f:
        _f.write(_text)
sys.path.insert(0, _stubs)
if not os.path.exists('kopf/_cogs/helpers/versions.py'):  # generated at Kopf's build
    with open('kopf/_cogs/helpers/versions.py', 'w') as _f:
        _f.write('version = "1.44.6"\n')
import sys, types, json, asyncio, datetime, logging, copy
m = types.ModuleType("kopf"); m.__path__ = ["kopf"]; sys.modules["kopf"] = m
from kopf import on
from kopf._core.reactor import processing, inventory
from kopf._core.actions import progression, lifecycles, execution
from kopf._core.intents import causes, registries
from kopf._cogs.configs import configuration
from kopf._cogs.structs import bodies, patches, references, diffs
from kopf._core.engines import indexing

RES = references.Resource(group='kopf.dev', version='v1', plural='kopfexamples', kind='KopfExample', namespaced=True)

def merge(target, patch):
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        elif isinstance(v, dict) and isinstance(target.get(k), dict):
            merge(target[k], v)
        else:
            target[k] = copy.deepcopy(v)

async def cycle(registry, settings, raw, reason, when):
    progression._get_basetime = lambda: when
    asyncio.get_running_loop().time = lambda: 0.0
    body = bodies.Body(raw)
    patch = patches.Patch()
    memory = inventory.ResourceMemory()
    cause = causes.ChangingCause(
        reason=reason, resource=RES, body=body, patch=patch, memo=memory.memo,
        logger=logging.getLogger('x'), indices=indexing.OperatorIndices(indexing.OperatorIndexers()), initial=False,
        diff=diffs.Diff([]), old=None, new=None)
    await processing.process_changing_cause(
        lifecycle=lifecycles.asap, registry=registry, settings=settings, memory=memory, cause=cause)
    return dict(patch)

def t(s):
    return datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc) + datetime.timedelta(seconds=s)

def scenario(name, register, times):
    registry = registries.OperatorRegistry()
    register(registry)
    settings = configuration.OperatorSettings()
    raw = {'apiVersion': 'kopf.dev/v1', 'kind': 'KopfExample',
           'metadata': {'name': 'obj', 'namespace': 'ns', 'uid': 'u'}, 'spec': {}}
    print('==', name)
    for i, when in enumerate(times):
        p = asyncio.run(cycle(registry, settings, raw, causes.Reason.CREATE, t(when)))
        print('cycle', i, 'at', when)
        print('   ', json.dumps(json.dumps(p.get('metadata', {}).get('annotations', {}), sort_keys=True, separators=(',', ':'))))
        if 'status' in p:
            print('    status =', json.dumps(p['status']))
        merge(raw, p)


logging.basicConfig(level=logging.DEBUG, format='    LOG %(levelname)s %(message)s')
for name in ['kopf', 'asyncio']:
    logging.getLogger(name).setLevel(logging.WARNING)
logging.getLogger('x').setLevel(logging.DEBUG)

def three(registry):
    on.create('kopfexamples', id='a', registry=registry)(lambda **_: None)
    def b(runtime, **_):
        print('    b runtime', runtime)
    on.create('kopfexamples', id='b', registry=registry)(b)
    on.create('kopfexamples', id='c', timeout=15, registry=registry)(lambda **_: None)

def subs(registry):
    def parent(**_):
        on.subhandler(id='zeta')(lambda **_: None)
        on.subhandler(id='alpha')(lambda **_: None)
    on.create('kopfexamples', id='parent', registry=registry)(parent)
    on.create('kopfexamples', id='after', registry=registry)(lambda **_: None)

def nested(registry):
    def flaky(retry, **_):
        if retry < 2:
            raise Exception('flaky')
    def parent(**_):
        def mid(**_):
            on.subhandler(id='leaf')(lambda **_: None)
        on.subhandler(id='zeta')(lambda **_: None)
        on.subhandler(id='mid')(mid)
    on.create('kopfexamples', id='flaky', backoff=0.5, registry=registry)(flaky)
    on.create('kopfexamples', id='parent', registry=registry)(parent)

scenario('three', three, [0, 10, 20])
scenario('subs', subs, [0, 1, 2])
scenario('nested', nested, [0, 1, 2, 3, 4])
