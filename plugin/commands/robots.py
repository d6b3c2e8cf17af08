"""``composedyn robots``: list the bundled robots (closed chains marked)."""

from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("robots", help="list the bundled robots")
    p.set_defaults(run=run)


def _closed_chain_dof(path) -> int | None:
    """Number of actuated joints when the file declares loop closures, else None."""
    from composedyn.importers.loops import side_file

    side = side_file(path)
    if not side.is_file() or (side.suffix == ".toml" and b"[[loops]]" not in side.read_bytes()):
        return None
    from composedyn.importers.loops import read_loops

    return len(read_loops(side)[1])


def run(args) -> int:
    import warnings

    import composedyn as cd
    from composedyn.robots import bundled_path, names

    for name in names():
        path = bundled_path(name)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = cd.load(name)
        k = _closed_chain_dof(path)
        kind = f"closed chain, {k} actuated of {r.dof} tree joints" if k is not None else f"{r.dof} dof"
        print(f"{name:14s} {kind:38s} {path.name}")
    return 0
