#!/usr/bin/env python3
"""Enumerates the declared search space of a kernel: its `@kopt param` and `@kopt method` annotations, under its
`@kopt constraint`s (docs/ANNOTATIONS.md). Compiler-flag methods, which kopt adds to every CUDA space, are not
included: every configuration printed has them off.

  kopt_space.py KERNEL.cu [--fix NAME=VALUE ...] [--format defines|json|count] [--narrowed-kernel OUT.cu]

`defines` prints one configuration per line as `-DNAME=VALUE` words (params, then KOPT_<ID> guards, 0 or 1);
`json` prints a list of {name: value}; `count` the number of valid configurations. `--fix` pins a dimension to
one value (it must be one of its declared values; params only: a method's guard always spans 0 and 1).
`--narrowed-kernel OUT.cu` writes a copy of the kernel whose `@kopt param` lines declare the fixed values only
(`values=V default=V`), so `kopt optimize OUT.cu` searches exactly the printed space. Constraints are evaluated with C semantics on the integers
(`/` and `%` truncate toward zero, `&&` `||` `!`, comparisons give 0 or 1), like kopt's own evaluator.
"""
import argparse
import itertools
import json
import re
import sys

TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(&&|\|\||==|!=|<=|>=|[-+*/%()<>!]))")


def tokenize(text):
    pos, out = 0, []
    text = text.strip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise ValueError(f"cannot read constraint at: {text[pos:]!r}")
        out.append(m.group(1) or m.group(2) or m.group(3))
        pos = m.end()
    return out


class Expr:
    """A recursive-descent parser with C precedence: || && (== !=) (< <= > >=) (+ -) (* / %) unary."""

    LEVELS = [["||"], ["&&"], ["==", "!="], ["<", "<=", ">", ">="], ["+", "-"], ["*", "/", "%"]]

    def __init__(self, text):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.tree = self.level(0)
        if self.i != len(self.toks):
            raise ValueError(f"trailing tokens in constraint {text!r}")

    def peek(self):
        return self.toks[self.i] if self.i < len(self.toks) else None

    def level(self, n):
        if n == len(self.LEVELS):
            return self.unary()
        left = self.level(n + 1)
        while self.peek() in self.LEVELS[n]:
            op = self.toks[self.i]
            self.i += 1
            left = (op, left, self.level(n + 1))
        return left

    def unary(self):
        t = self.peek()
        if t in ("!", "-", "+"):
            self.i += 1
            return ("u" + t, self.unary())
        if t == "(":
            self.i += 1
            e = self.level(0)
            if self.peek() != ")":
                raise ValueError(f"missing ) in {self.text!r}")
            self.i += 1
            return e
        self.i += 1
        if t is None:
            raise ValueError(f"constraint {self.text!r} ends early")
        return int(t) if t.isdigit() else ("name", t)

    def names(self, node=None):
        node = self.tree if node is None else node
        if isinstance(node, int):
            return set()
        if node[0] == "name":
            return {node[1]}
        return set().union(*(self.names(c) for c in node[1:]))

    def eval(self, env, node=None):
        node = self.tree if node is None else node
        if isinstance(node, int):
            return node
        op = node[0]
        if op == "name":
            return env[node[1]]
        if op == "u!":
            return int(not self.eval(env, node[1]))
        if op == "u-":
            return -self.eval(env, node[1])
        if op == "u+":
            return self.eval(env, node[1])
        if op == "&&":
            return int(bool(self.eval(env, node[1])) and bool(self.eval(env, node[2])))
        if op == "||":
            return int(bool(self.eval(env, node[1])) or bool(self.eval(env, node[2])))
        a, b = self.eval(env, node[1]), self.eval(env, node[2])
        if op in ("/", "%"):
            if b == 0:
                raise ZeroDivisionError
            q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)  # C truncation
            return q if op == "/" else a - b * q
        return {"+": a + b, "-": a - b, "*": a * b, "==": int(a == b), "!=": int(a != b), "<": int(a < b),
                "<=": int(a <= b), ">": int(a > b), ">=": int(a >= b)}[op]


def parse_annotations(text):
    """Returns (dims, constraints): dims is a list of (name, values, default) with guards last."""
    params, guards, constraints = [], [], []
    for line in text.splitlines():
        m = re.search(r"//\s*@kopt\s+(\w+)\s+(.*)$", line)
        if not m:
            continue
        kind, rest = m.group(1), m.group(2).strip()
        if kind == "param":
            name, _, tail = rest.partition(" ")
            kv = dict(re.findall(r"(\w+)=(.*?)(?=\s+\w+=|$)", tail))
            if "values" in kv:
                values = [int(v) for v in kv["values"].split(",")]
            else:
                lo, hi = (int(x) for x in kv["range"].split(".."))
                step = kv.get("step", "1")
                values, v = [], lo
                while v <= hi:
                    values.append(v)
                    v = v * 2 if step == "pow2" else v + int(step)
            default = int(kv["default"]) if "default" in kv else values[0]
            params.append((name, values, default))
        elif kind == "method":
            method_id = rest.split()[0]
            guards.append(("KOPT_" + re.sub(r"[^A-Za-z0-9]", "_", method_id).upper(), [0, 1], 0))
        elif kind == "constraint":
            constraints.append(Expr(rest))
    return params + guards, constraints


def enumerate_space(dims, constraints, fixed=None):
    fixed = fixed or {}
    names = [d[0] for d in dims]
    for k, v in fixed.items():
        if k not in names:
            raise SystemExit(f"kopt_space: --fix {k}: no such dimension (known: {', '.join(names)})")
        if v not in dims[names.index(k)][1]:
            raise SystemExit(f"kopt_space: --fix {k}={v}: not one of {dims[names.index(k)][1]}")
    axes = [[fixed[n]] if n in fixed else vals for n, vals, _ in dims]
    for combo in itertools.product(*axes):
        env = dict(zip(names, combo))
        try:
            if all(c.eval(env) for c in constraints):
                yield env
        except ZeroDivisionError:
            continue


def narrowed(text, fixed):
    """The kernel's text with each fixed param's annotation reduced to its one value."""
    out = []
    for line in text.splitlines(keepends=True):
        m = re.search(r"(//\s*@kopt\s+param\s+)(\w+)(\s+.*?)(\r?\n?)$", line)
        if m and m.group(2) in fixed:
            v = fixed[m.group(2)]
            line = line[:m.start()] + f"{m.group(1)}{m.group(2)} values={v} default={v}{m.group(4)}"
        out.append(line)
    return "".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("kernel")
    ap.add_argument("--fix", action="append", default=[], metavar="NAME=VALUE")
    ap.add_argument("--format", choices=["defines", "json", "count"], default="defines")
    ap.add_argument("--narrowed-kernel", metavar="OUT.cu")
    a = ap.parse_args(argv)
    text = open(a.kernel).read()
    dims, constraints = parse_annotations(text)
    fixed = {}
    for f in a.fix:
        k, _, v = f.partition("=")
        if k.startswith("KOPT_"):
            raise SystemExit(f"kopt_space: --fix {f}: only params can be fixed (a method guard always spans 0 and 1)")
        try:
            fixed[k] = int(v)
        except ValueError:
            raise SystemExit(f"kopt_space: --fix {f}: expected NAME=INTEGER")
    configs = list(enumerate_space(dims, constraints, fixed))
    if a.narrowed_kernel:
        default = {n: d for n, _, d in dims}
        if any(not c.eval({**default, **fixed}) for c in constraints):
            raise SystemExit("kopt_space: with these --fix values the default configuration breaks a constraint, "
                             "so kopt would refuse the narrowed kernel; fix other values")
        with open(a.narrowed_kernel, "w") as f:
            f.write(narrowed(text, fixed))
    if a.format == "count":
        print(len(configs))
    elif a.format == "json":
        json.dump(configs, sys.stdout)
        print()
    else:
        for c in configs:
            print(" ".join(f"-D{k}={v}" for k, v in c.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
