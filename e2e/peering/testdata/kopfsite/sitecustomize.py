"""Completes Kopf 1.44.6's source for the e2e tests, then runs the next sitecustomize.

Python imports this module at start-up when its directory comes first on PYTHONPATH:

    PYTHONPATH=<this dir>:<kopf-1.44.6>/debian12-shims:<kopf-1.44.6> /usr/bin/python3 -m kopf run ...

- kopf/_cogs/helpers/versions.py is written by Kopf's installer (setuptools-scm); a copy of the
  source may lack it (../shared/kopf-1.44.6 does). Only where the file is absent, this registers
  the module it would be for Kopf 1.44.6 (tag 1.44.6, commit 60d02aef) in sys.modules: each
  value under its dunder name and its plain one, as setuptools-scm writes them.
- Python imports one sitecustomize only, the first on the path: this one then executes the next
  sitecustomize.py on sys.path (the debian12 shims of Debian 12's aiohttp and click), as if it
  had been imported itself.
"""
import importlib.machinery
import os
import runpy
import sys
import types

_HERE = os.path.dirname(os.path.abspath(__file__))
_NAME = 'kopf._cogs.helpers.versions'


def _versions_file_missing() -> bool:
    spec = importlib.machinery.PathFinder.find_spec('kopf')
    if spec is None or not spec.submodule_search_locations:
        return False  # no Kopf on the path: nothing to complete
    return not any(os.path.exists(os.path.join(loc, '_cogs', 'helpers', 'versions.py'))
                   for loc in spec.submodule_search_locations)


if _NAME not in sys.modules and _versions_file_missing():
    _versions = types.ModuleType(_NAME)
    _versions.__version__ = _versions.version = '1.44.6'
    _versions.__version_tuple__ = _versions.version_tuple = (1, 44, 6)
    _versions.__commit_id__ = _versions.commit_id = '60d02aef'
    sys.modules[_NAME] = _versions

for _entry in sys.path:
    _path = os.path.join(_entry or os.getcwd(), 'sitecustomize.py')
    if os.path.abspath(_entry or os.getcwd()) != _HERE and os.path.isfile(_path):
        runpy.run_path(_path, run_name='sitecustomize')
        break
