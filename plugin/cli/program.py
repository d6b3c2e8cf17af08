"""The ``composedyn`` command line.

Each subcommand lives in its own module under ``composedyn.cli.commands`` and
exposes ``register(subparsers)``, which adds a parser whose ``run(args)``
default returns the exit status.  The project's own errors (``ModelError``,
``SimulationError``, ``OSError`` for files, ``MissingExtra`` for a feature whose
optional dependency is not installed, and a ``ValueError`` raised by
composedyn's own checks) print one line on stderr and exit with status 2; any
other exception, including a ``ValueError`` raised inside a third-party
library, is a bug and shows its traceback.  A ``ModelWarning`` prints
one line ``composedyn: warning: ...`` on stderr; other warnings stay hidden.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import warnings

from composedyn.errors import MissingExtra, ModelError, ModelWarning, SimulationError

USER_ERRORS = (ModelError, SimulationError, OSError, MissingExtra)  # one line on stderr, exit status 2
ROBOT_HELP = ("robot description: a URDF, MJCF or SDFormat file (recognised by its root element <robot>, <mujoco>, "
              "<sdf>), a .xacro or DH .toml file, or a bundled robot name")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, status 2
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)

    def add_argument(self, *args, **kwargs):
        """As argparse; a command taking a ``robot`` argument also gets ``--package-dir`` (xacro packages,
        SDFormat includes), ``--root`` (MJCF) and ``--model`` (SDFormat worlds).  Arguments naming
        files are recorded for :func:`check_outputs`: outputs (metavar ``OUT.<ext>``) and inputs
        (the robot, a ``LOG``, a ``FILE.toml``)."""
        action = super().add_argument(*args, **kwargs)
        role = _file_role(action)
        if role is not None:
            name = action.option_strings[0] if action.option_strings else (
                "ROBOT" if action.dest == "robot" else action.metavar)
            self.set_defaults(file_arguments=(*(self.get_default("file_arguments") or ()),
                                               (action.dest, name, role)))
        if action.dest == "robot" and not action.option_strings:
            super().add_argument("--package-dir", action="append", metavar="DIR",
                                 help="folder of a package that a .xacro robot refers to with $(find PKG) or "
                                      "package://PKG (the folder PKG itself or one containing it), or where an "
                                      "SDFormat <include> finds model://NAME; repeatable")
            super().add_argument("--root", metavar="BODY",
                                 help="MJCF: the body whose subtree is the robot, in a scene with other free bodies")
            super().add_argument("--model", metavar="NAME",
                                 help="SDFormat: the model to load from a <world> with several")
        return action


def _file_role(action) -> str | None:
    """"output" for an argument whose metavar is ``OUT.<ext>``, "input" for the robot, a ``LOG``
    or a ``FILE.toml``, None for any other."""
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    if metavar.startswith("OUT."):
        return "output"
    if (action.dest == "robot" and not action.option_strings) or metavar in ("LOG", "FILE.toml"):
        return "input"
    return None


def check_outputs(args: argparse.Namespace) -> None:
    """ValueError, one line naming the option and the path, when an output file of the command
    is the same file as one of its inputs (the robot, a LOG, --limits, --validate), whose
    content writing it would replace.  With several positional LOGs, the per-log outputs
    (``per_log_outputs``: ``OUT.<log name>.csv`` ...) are checked under the names they get."""
    from composedyn.logs.cli import output_path
    from composedyn.writing import refuse_inputs

    def given(dest) -> list:
        value = getattr(args, dest, None)
        return [] if value is None else [value] if isinstance(value, str) else list(value)

    files = getattr(args, "file_arguments", ())
    inputs = [(name, path) for dest, name, role in files if role == "input" for path in given(dest)]
    logs = [path for dest, name, role in files if role == "input" and name == "LOG" for path in given(dest)]
    outputs = []
    for dest, name, role in files:
        for path in given(dest) if role == "output" else ():
            if len(logs) > 1 and dest in getattr(args, "per_log_outputs", ()):
                each = (output_path(path, log, True) for log in logs)
                outputs += [(f"{name} {path} (written as {out})", out) for out in each]
            else:
                outputs.append((f"{name} {path}", path))
    refuse_inputs(outputs, inputs)


def declared_loops(name_or_path: str) -> tuple[str, list[str]] | None:
    """(loop file, actuated joints) when a robot description declares loop closures, else None.

    ``name_or_path``: a bundled name or a description file, as given to ``cd.load``.
    """
    from pathlib import Path

    from composedyn.importers.loops import read_loops, side_file
    from composedyn.importers.mjcf import closes_loops, is_mjcf
    from composedyn.robots import bundled_path

    if is_mjcf(name_or_path):  # loop closures are <equality connect/weld> in the file itself
        return closes_loops(name_or_path)
    path = Path(name_or_path)
    if not path.suffix:
        path = bundled_path(str(name_or_path)) or path
    side = side_file(path)
    if not side.is_file() or (side.suffix == ".toml" and b"[[loops]]" not in side.read_bytes()):
        return None
    return str(side), list(read_loops(side)[1])


FLOATING_COMMANDS = ("torques",)  # the commands that take a floating-base robot


def load_options(args: argparse.Namespace) -> dict:
    """The ``cd.load`` keywords of the robot options common to every command: ``package_dirs``
    (``--package-dir``, in order), ``root`` (``--root``, MJCF only) and ``model`` (``--model``,
    SDFormat only), each only when given."""
    options = {}
    if getattr(args, "package_dir", None):
        options["package_dirs"] = list(args.package_dir)
    if getattr(args, "root", None):
        from composedyn.importers.mjcf import is_mjcf

        if not is_mjcf(args.robot):
            raise ValueError(f"{args.robot}: --root picks the robot's body in an MJCF scene; this is not MJCF")
        options["root"] = args.root
    if getattr(args, "model", None):
        from composedyn.importers.sdf import looks_like_sdf

        if not looks_like_sdf(args.robot):
            raise ValueError(f"{args.robot}: --model chooses a model of an SDFormat <world>; this is not SDFormat")
        options["model"] = args.model
    return options


def load_robot(name_or_path: str, options: dict | None = None, **kwargs):
    """``cd.load(name_or_path, **options, **kwargs)``; ``options`` from :func:`load_options`."""
    import composedyn as cd

    return cd.load(name_or_path, **(options or {}), **kwargs)


def one_coordinate_joints(robot, name_or_path: str, command: str):
    """``robot``, or ModelError when it has joints of several coordinates below a floating base (a
    ``TreeRobot``), which ``composedyn {command}`` does not take."""
    from composedyn.joint_space import several_coordinates

    if not several_coordinates(robot):
        return robot
    kinds = sorted({j.kind for j in robot.joints})
    raise ModelError(f"{name_or_path}: joints of several coordinates (its kinds: {', '.join(kinds)}); "
                     f"`composedyn {command}` "
                     "handles robots whose joints have one coordinate each (info takes this robot, and "
                     "composedyn.load from Python)")


def load_open_tree(name_or_path: str, command: str, options: dict | None = None):
    """``cd.load`` for commands that handle open trees only; ModelError for a closed chain, and for
    a floating base (a URDF whose root joint is floating or planar) unless ``command`` takes one.
    ``options``: the common loading options (:func:`load_options`)."""
    loops = declared_loops(name_or_path)
    if loops is not None:
        raise ModelError(f"{name_or_path}: a closed chain (loops in {loops[0]}); `composedyn {command}` "
                         "handles open trees only, use composedyn.load_closed_chain from Python")
    robot = one_coordinate_joints(load_robot(name_or_path, options), name_or_path, command)
    if robot.floating and command not in FLOATING_COMMANDS:
        from composedyn.importers.sdf import looks_like_sdf

        hint = ("; an SDFormat model not attached to the world is free: `composedyn convert MODEL OUT.urdf "
                "--floating fixed` writes it with a fixed base" if looks_like_sdf(name_or_path) else "")
        raise ModelError(f"{name_or_path}: a floating base (root joint {robot.base.joint!r}); `composedyn {command}` "
                         f"handles fixed-base robots (floating bases: {', '.join(FLOATING_COMMANDS)}, info, "
                         f"and composedyn.load(..., floating=True) from Python){hint}")
    return robot


def build_parser() -> argparse.ArgumentParser:
    import composedyn.cli.commands as commands
    from composedyn import __version__

    parser = _Parser(prog="composedyn", description="Robot dynamics from URDF, xacro, MJCF, SDFormat or DH tables.")
    parser.add_argument("--version", action="version", version=f"composedyn {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"composedyn.cli.commands.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status (0 ok, 1 limit exceeded, 2 bad input)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            warnings.simplefilter("always", ModelWarning)
            warnings.showwarning = _warning_printer()
            check_outputs(args)
            return int(args.run(args) or 0)
    except (*USER_ERRORS, ValueError) as e:
        if not _own_error(e):
            raise
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        print(f"composedyn: error: {msg}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _own_error(e: BaseException) -> bool:
    """True for ``USER_ERRORS``, and for a ``ValueError`` raised by composedyn's code
    (the innermost frame of its traceback is in a ``composedyn`` module)."""
    if isinstance(e, USER_ERRORS):
        return True
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__", "").split(".")[0] == "composedyn"


def _warning_printer():
    """A ``warnings.showwarning`` that prints each distinct message once, as one line on stderr."""
    shown = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = str(message).splitlines()[0] if str(message) else category.__name__
        if text not in shown:
            shown.add(text)
            print(f"composedyn: warning: {text}", file=sys.stderr)

    return show

