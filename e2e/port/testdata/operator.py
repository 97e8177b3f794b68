"""An operator written for kopf-go's end-to-end test of kopf-gen port
(e2e/port): a create handler whose result goes to the status, a field
handler that patches the status, a deletion handler (hence a finalizer),
log lines with f-strings and !r."""
import kopf


@kopf.on.create('example.com', 'v1', 'widgets')
def create_fn(spec, name, logger, **_):
    size = spec.get('size', 1)
    logger.info(f"Creating {name!r} of size {size}.")
    return {'message': f"hello {name}", 'size': size}


@kopf.on.field('example.com', 'v1', 'widgets', field='spec.size')
def size_fn(old, new, patch, **_):
    patch.status['resized'] = f"{old!r} -> {new!r}"


@kopf.on.delete('example.com', 'v1', 'widgets')
def delete_fn(name, logger, **_):
    logger.info(f"Deleting {name!r}: bye.")
