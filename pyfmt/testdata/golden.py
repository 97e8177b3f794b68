#!/usr/bin/python3
"""Writes golden.json: Python's repr(), str() and pprint.pformat() of JSON values.

Run from this directory with Debian's python3 (3.11): /usr/bin/python3 golden.py
Each case is a JSON text as Kopf would receive it: the cases listed, then 100
random values (seeded, so the file is the same on every run). The Go test decodes the same
text (numbers kept as json.Number) and compares pyfmt's output with these.

Two conventions stand for what JSON cannot say: {"__tuple__": [...]} is a
tuple (a Go array or pyfmt.Tuple), {"__dict__": [[key, value], ...]} a dict
whose keys need not be strings. Go maps have no order: pyfmt sorts the keys of
every dict, so the dicts here are sorted before repr() and str() too (as
pprint's sort_dicts=True does).
"""
import json
import pprint
import random

LONG = "lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor"
CASES = [
    # scalars
    'null', 'true', 'false', '0', '-0', '1', '-17', '1.0', '-1.5', '0.1', '0.5',
    '1e16', '1E16', '1e-5', '1.25e-05', '123456789012345678901234567890',
    '9223372036854775807', '9223372036854775808', '-9223372036854775809',
    '1e300', '1e400', '-1e400', '5e-324', '1e-400', '0.0', '-0.0',
    '1234567890123456.7', '100.0', '1e15', '1.7976931348623157e308',
    # strings
    '""', '"plain"', '"it\'s"', '"say \\"hi\\""', '"both \' and \\""',
    '"back\\\\slash"', '"tab\\tnl\\ncr\\r"', '"\\u0000\\u0001\\u001f\\u007f"',
    '"\\u0080\\u009f\\u00a0\\u00ad\\u00e9"', '"caf\\u00e9 \\u043f\\u0440\\u0438\\u0432\\u0435\\u0442"',
    '"\\u4e2d\\u6587"', '"\\ud83d\\ude00 emoji"', '"\\u200b\\u200e\\ufeff\\u2028\\u2029"',
    '"\\u3000\\u1680\\u2003"', '"\\ue000 private"', '"\\udb80\\udc00 plane 15"',
    '"\\u000b\\u000c\\u001c\\u0085"', '"\'"', '"\\""', '"\'\\""',
    # containers
    '[]', '{}', '[1, 2.0, "x", null, true]', '{"b": 1, "a": [1, {"z": null}]}',
    '{"it\'s": "v", "k\\u00e9y": "\\u00e9"}', '[[[]]]', '[{}]',
    '{"__tuple__": []}', '{"__tuple__": [1]}', '{"__tuple__": ["a", "b"]}',
    '{"__dict__": [[{"__tuple__": ["ns", "b"]}, ["x"]], [{"__tuple__": ["ns", "a"]}, ["y", "z"]]]}',
    '{"__dict__": [[2, "two"], [1, "one"], [10, "ten"]]}',
    # pformat: wrapping
    '{"spec": {"field": "value", "items": ["item1", "item2", "item3"], "nested": {"a": 1, "b": [1, 2, 3]}}}',
    '[' + ', '.join(f'"item-{i}"' for i in range(30)) + ']',
    json.dumps({f'key{i:02d}': i for i in range(25)}),
    '{"metadata": {"labels": {"app": "web", "tier": "frontend", "owner": "team-a"}, "name": "kopf-example-1", "namespace": "default"}, "spec": {"duration": "1m", "field": "value", "items": ["item1", "item2"]}}',
    '[[' + ', '.join(str(i) for i in range(40)) + '], {"a": [' + ', '.join(str(i * 1.5) for i in range(20)) + ']}]',
    json.dumps(LONG), json.dumps(LONG + " " + LONG), json.dumps(LONG + "\n" + LONG + "\nshort\n"),
    json.dumps({"message": LONG + " " + LONG, "lines": "one\ntwo\n" + LONG + " " + LONG}),
    json.dumps([LONG + " " + LONG]), json.dumps({"k": [{"deep": [LONG, LONG + " x"]}]}),
    json.dumps("x" * 100), json.dumps("caf\u00e9 " * 30), json.dumps("it's " * 20),
    json.dumps("word   " * 20), json.dumps(" " * 100), json.dumps("a\tb\t" * 20),
    json.dumps({"__tuple__": [LONG, LONG]}), json.dumps({"__tuple__": [LONG + LONG]}),
    json.dumps({"__dict__": [[{"__tuple__": ["default", "x" * 40]}, ["pod-" + "y" * 40, "pod-z"]],
                             [{"__tuple__": ["default", "a"]}, ["pod-a"]]]}),
    json.dumps([[[[[["deep" * 10] * 3] * 2]]]]),
    json.dumps({"a" * 70: {"b" * 70: [1, 2]}}),
    json.dumps({"x": 1e16, "y": 0.1, "z": 123456789012345678901234567890, "w": [1.0] * 20}),
]

WORDS = ["a", "spec", "field", "it's", 'say "hi"', "caf\u00e9", "\u4e2d\u6587", "\U0001f600", "tab\there",
         "line\nbreak", "back\\slash", "   ", "x" * 30, "lorem ipsum dolor", "\u00a0nbsp", "\x7f\x00"]


def random_value(rnd, depth):
    """A random JSON value, deterministic for the seed: pformat's wrapping met at every depth."""
    choice = rnd.random()
    if depth >= 3 or choice < 0.35:
        kind = rnd.randrange(7)
        if kind == 0:
            return rnd.choice([None, True, False])
        if kind == 1:
            return rnd.choice([0, 1, -7, 10**rnd.randrange(30), -(2**63), 2**64])
        if kind == 2:
            return rnd.choice([0.5, 1.0, 1e16, 1e-5, 123.456, -0.1, rnd.uniform(-1e6, 1e6), rnd.uniform(0, 1) * 10 ** rnd.randrange(-8, 25)])
        return " ".join(rnd.choice(WORDS) for _ in range(rnd.randrange(1, 10)))
    if choice < 0.65:
        return {rnd.choice(WORDS) + str(rnd.randrange(5)): random_value(rnd, depth + 1) for _ in range(rnd.randrange(5))}
    if choice < 0.9:
        return [random_value(rnd, depth + 1) for _ in range(rnd.randrange(6))]
    return {"__tuple__": [random_value(rnd, depth + 1) for _ in range(rnd.randrange(4))]}


RANDOM = random.Random(28)
CASES += [json.dumps(random_value(RANDOM, 0)) for _ in range(100)]


def convert(v):
    if isinstance(v, dict):
        if set(v) == {"__tuple__"}:
            return tuple(convert(x) for x in v["__tuple__"])
        if set(v) == {"__dict__"}:
            return {convert(k): convert(x) for k, x in v["__dict__"]}
        return {k: convert(x) for k, x in v.items()}
    if isinstance(v, list):
        return [convert(x) for x in v]
    return v


def ordered(v):
    if isinstance(v, dict):
        return {k: ordered(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [ordered(x) for x in v]
    if isinstance(v, tuple):
        return tuple(ordered(x) for x in v)
    return v


out = []
for text in CASES:
    v = ordered(convert(json.loads(text)))
    out.append({"json": text, "repr": repr(v), "str": str(v), "pformat": pprint.pformat(v)})
with open("golden.json", "w") as f:
    json.dump(out, f, indent=1, ensure_ascii=True)
    f.write("\n")
