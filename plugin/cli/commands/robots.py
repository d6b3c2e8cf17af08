"""``composedyn robots``: list the bundled robots (closed chains marked)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("robots", help="list the bundled robots")
    p.set_defaults(run=run)


def run(args) -> int:
    import warnings

    import composedyn as cd
    from composedyn.cli.program import declared_loops
    from composedyn.robots import bundled_path, names

    for name in names():
        path = bundled_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = cd.load(name)
        loops = declared_loops(str(path))
        kind = f"closed chain, {len(loops[1])} actuated of {r.dof} tree joints" if loops else f"{r.dof} dof"
        print(f"{name:14s} {kind:42s} {path.name}")
    return 0
