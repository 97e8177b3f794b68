# Prints the cases of TestEncodeEssenceAsKopf: Kopf's own diff-base code
# (AnnotationsDiffBaseStorage.build and .store of Kopf 1.44.6) run on bodies
# as the API server sends custom resources (sorted keys). No dependency
# beyond Python 3 is needed; from an extracted source tree of Kopf:
#   git -C <kopf repo> archive 1.44.6 kopf | tar -x -C /tmp/k
#   cd /tmp/k && python3 <this file>
import sys, types, json
m=types.ModuleType("kopf"); m.__path__=["kopf"]; sys.modules["kopf"]=m
from kopf._cogs.configs import diffbase
from kopf._cogs.structs import bodies, patches

def apiserver(obj):
    # The API server encodes custom resources from Go maps: sorted keys.
    return json.dumps(obj, sort_keys=True, separators=(',', ':'))

cases = [
    ("spec, labels and annotations",
     {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
      "metadata": {"name": "kopf-example-1", "namespace": "default", "uid": "u", "resourceVersion": "1",
                   "labels": {"somelabel": "somevalue", "app": "x"},
                   "annotations": {"someannotation": "somevalue", "kopf.zalando.org/create_fn": "{}",
                                   "kubectl.kubernetes.io/last-applied-configuration": "{}"}},
      "spec": {"field": "value", "duration": "1m", "items": ["item1", "item2"], "nested": {"z": 1, "a": [{"y": 2, "b": 3}]}},
      "status": {"phase": "x"}}, []),
    ("top-level fields around metadata",
     {"apiVersion": "v1", "kind": "Thing", "data": {"k": "v"}, "zzz": 1, "aaa": True,
      "metadata": {"name": "n", "annotations": {"a": "b"}}}, []),
    ("extra fields in status and metadata",
     {"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
      "metadata": {"name": "n", "generation": 3, "labels": {"l": "v"}},
      "spec": {"x": 1}, "status": {"phase": "Ready", "count": 2, "other": "dropped"}},
     [("status", "phase"), ("metadata", "generation")]),
    ("numbers as the API server writes them",
     {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": "n"},
      "spec": {}}, [],
     '{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"n"},"spec":{"beyond":9223372036854776000,"big":12345678901234567000,"half":0.5,"huge":1e+21,"int":42,"maxint":9223372036854775807,"neg":-2.5,"small":0.0000125,"tiny":1e-7}}'),
    ("strings with escapes",
     {"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": {"name": "n", "labels": {"l": "\u00e9"}},
      "spec": {"msg": "<\u65e5\u672c>&\"\\\n\U0001F600"}}, []),
]
for name, obj, extra, *raw in cases:
    lit = raw[0] if raw else apiserver(obj)
    body = bodies.Body(json.loads(lit))
    storage = diffbase.AnnotationsDiffBaseStorage()
    essence = storage.build(body=body, extra_fields=extra)
    patch = patches.Patch()
    storage.store(body=body, patch=patch, essence=essence)
    stored = patch['metadata']['annotations']['kopf.zalando.org/last-handled-configuration']
    gox = "nil" if not extra else "[][]string{" + ", ".join("{" + ", ".join(json.dumps(p) for p in f) + "}" for f in extra) + "}"
    print("{%s,\n\t`%s`,\n\t%s,\n\t%s}," % (json.dumps(name), lit, gox, json.dumps(stored)))
