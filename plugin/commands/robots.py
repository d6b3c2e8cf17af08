"""``composedyn robots``: list the bundled robots."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("robots", help="list the bundled robots")
    p.set_defaults(run=run)


def run(args) -> int:
    import composedyn as cd
    from composedyn.robots import names

    for name in names():
        r = cd.load(name)
        print(f"{name:16s} {r.dof:2d} dof  {r.model.source.rsplit('/', 1)[-1]}")
    return 0
