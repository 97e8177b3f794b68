"""An operator of built-in resources only (no CRD): its ported
repository's own tests must pass without config/crd."""
import kopf


@kopf.on.create('configmaps')
def create_fn(name, logger, **_):
    logger.info(f"ConfigMap {name!r} created.")
