"""An operator written for kopf-gen port's golden test: every decorator and idiom."""
import logging
import pprint

import kopf

counters = {}
LIMIT = 3
SEEN = {}


def is_good(value, spec, **_):
    return value == 'good' and spec.get('flag') is not None


def big(value, **_):
    return value > 10


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, logger, **_):
    settings.posting.level = logging.WARNING
    settings.persistence.finalizer = 'widgets.example.com/finalizer'
    settings.execution.default_backoff = 5
    settings.admission.server = kopf.WebhookServer(port=1234, certfile='cert.pem', pkeyfile='key.pem', extra_sans=['example.com'])
    settings.admission.server = kopf.WebhookK3dServer(port=1234, host='k3d.local')
    settings.admission.server = kopf.WebhookMinikubeServer(port=1234, cadump='ca.pem')
    settings.admission.server = kopf.WebhookNgrokTunnel(path='/xyz', port=1234)
    settings.admission.server = kopf.WebhookAutoServer(file_check_interval=30)
    settings.admission.managed = 'auto.kopf.dev'
    logger.info("Configured.")


@kopf.on.cleanup()
def cleanup(logger, **_):
    logger.info("Bye.")


@kopf.on.login(errors=kopf.ErrorsMode.PERMANENT)
def login(**_):
    return None


@kopf.on.probe(id='count')
def probe_count(memo, **_):
    return len(memo.counters)


@kopf.on.create('widgets', id='sync', retries=2)
@kopf.on.update('widgets', id='sync')
def sync_fn(logger, **_):
    logger.info("Synced.")


@kopf.on.resume('widgets', deleted=True)
@kopf.on.create('example.com', 'v1', 'widgets', retries=3, backoff=1.5, timeout=60)
def create_fn(spec, name, namespace, logger, patch, retry, memo, **_):
    """Greets the widget."""
    size = spec.get('size', 1)
    if retry < 2:
        raise kopf.TemporaryError(f"Not yet: {retry!r}", delay=2)
    if namespace is None:
        raise kopf.PermanentError("no namespace")
    for item in spec.get('items', []):
        logger.info(f"item {item}")
    patch.status['size'] = size
    patch.metadata.labels['greeted'] = 'yes'
    logger.warning("size %s of %r", size, name)
    print("created", name)
    memo.last = name
    return {'message': f"hello {name}", 'size': size}


@kopf.on.update('widgets', field='spec.size', old=1, new=big, errors=kopf.ErrorsMode.IGNORED)
def resize(old, new, diff, logger, **_):
    logger.debug(f"{old} -> {new}")


@kopf.on.field('widgets', field=['spec', 'a.b'], value=kopf.PRESENT, id='ab')
def ab_changed(body, **_):
    kopf.info(body, reason='Changed', message='a.b changed')
    kopf.warn(body, reason='Warned')
    kopf.event(body, type='Normal', reason='Event', message='an event')


@kopf.on.delete('widgets', optional=True, labels={'app': 'web', 'tier': kopf.PRESENT, 'old': kopf.ABSENT, 'q': is_good},
                annotations={'x/y': 'z'}, when=lambda spec, **_: spec.get('deletable', True))
def delete_fn(body, logger, **_):
    doc = {'apiVersion': 'v1', 'kind': 'ConfigMap', 'data': {}}
    kopf.adopt(doc)
    kopf.label(doc, {'app': 'web'})
    with open('/dev/null') as f:
        f.write('kept as a TODO')


@kopf.on.event('widgets', value='x', field='spec.mode')
def on_event(event, type, logger, **_):
    if type == 'DELETED':
        return
    logger.info(f"event {event!r}")


@kopf.daemon('widgets', initial_delay=1, cancellation_backoff=2, cancellation_timeout=3.5, cancellation_polling=1)
def monitor(stopped, logger, **_):
    while not stopped:
        logger.info("monitoring")
        stopped.wait(10)


@kopf.timer('widgets', interval=30, idle=5, sharp=True, initial_delay=2)
async def tick(spec, logger, **_):
    await asyncio.sleep(1)
    logger.info(f"tick {spec['size']!r}")


@kopf.index('pods')
def by_name(name, namespace, **_):
    return {namespace: name}


@kopf.on.validate('widgets', operations=['CREATE', 'UPDATE'], subresource='*', persistent=True, side_effects=True, ignore_failures=True)
def check(spec, warnings, dryrun, **_):
    if not dryrun and spec.get('size', 0) > LIMIT:
        raise kopf.AdmissionError("too big", code=422)
    warnings.append("checked")


@kopf.on.mutate('widgets', operation='CREATE')
def default_size(patch, **_):
    patch.spec['size'] = 1


@kopf.on.create('widgets', id='children')
def spawn(spec, **_):
    for item in spec.get('items', []):
        @kopf.subhandler(id=item)
        def one(item=item, **_):
            print(f"child {item}")

    def other(**_):
        print("registered")
    kopf.register(other, id='other')


@kopf.on.create('pods', when=is_ready)
def pod_created(name, logger, **_):
    logger.info(f"pod {name}")


def is_ready(body, **_):
    return body.get('status', {}).get('phase') == 'Running'


def helper():
    return 42


@kopf.on.update('widgets')
def tally(spec, diff, name, logger, **_):
    assert name, "a name"
    assert spec.get('size') is not None
    pprint.pprint(list(diff))
    sizes = {key: val for key, val in spec.items() if key != 'items'}
    lengths = [len(item) for item in spec.get('items', []) if item]
    total = sum(n for n in lengths)
    for key, (size, _) in sorted(sizes.items()):
        logger.info(f"{key}={size!r}")
    seen = SEEN.setdefault(name, [])
    for key in list(sizes.keys()) + sorted(sizes.values()):
        logger.debug(f"{key} of {total} in {seen}")
