# Print the AST of a Python module as JSON, for kopf-gen port.
# Usage: python3 pyast.py FILE.py  (needs Python >= 3.8)
import ast
import json
import sys

if sys.version_info < (3, 8):
    sys.stderr.write("kopf-gen port needs Python 3.8 or newer, this is %s\n" % sys.version.split()[0])
    sys.exit(3)


def conv(node):
    if isinstance(node, ast.AST):
        out = {"_type": type(node).__name__}
        for name, value in ast.iter_fields(node):
            out[name] = conv(value)
        for name in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
            if hasattr(node, name):
                out[name] = getattr(node, name)
        return out
    if isinstance(node, list):
        return [conv(x) for x in node]
    if node is None or isinstance(node, (str, bool, int)):
        return node
    if isinstance(node, float):
        return {"_float": repr(node)}
    if node is Ellipsis:
        return {"_ellipsis": True}
    return {"_repr": repr(node)}


def main():
    path = sys.argv[1]
    with open(path, encoding="utf-8") as f:
        source = f.read()
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        sys.stderr.write("%s:%s:%s: %s\n" % (path, e.lineno, e.offset, e.msg))
        sys.exit(2)
    json.dump(conv(tree), sys.stdout)


main()
