"""Hostile descriptions end in one line: xacro recursion, self-inclusion, an argument without
default, properties that double at every level (bounded by the expansion's memory limit),
deeply nested TOML; the CLI prints that line and exits 2.  ``<!DOCTYPE`` inside a comment is
text, not a declaration."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

import composedyn as cd
from composedyn.importers import xacro as xacro_importer

HEAD = '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
CASES = {
    "recursion": (HEAD + '<xacro:macro name="m"><xacro:m/></xacro:macro><link name="base"/><xacro:m/></robot>',
                  r"recursion deeper than \d+ levels"),
    "self_include": (HEAD + '<link name="base"/><xacro:include filename="self_include.xacro"/></robot>',
                     r"recursion deeper than \d+ levels"),
    "arg_without_default": (HEAD + '<xacro:arg name="x"/><link name="$(arg x)"/></robot>',
                            r"xacro:arg.*default"),
    "doubling": (HEAD + '<xacro:property name="p0" value="abcdefgh"/>'
                 + "".join(f'<xacro:property name="p{i}" value="${{p{i - 1}}}${{p{i - 1}}}"/>' for i in range(1, 60))
                 + '<link name="${p59}"/></robot>', r"memory limit of 256 MB"),
}


@pytest.fixture()
def small_memory(monkeypatch):
    monkeypatch.setattr(xacro_importer, "XACRO_MEMORY", 256 * 2**20)  # the doubling case ends sooner


@pytest.mark.parametrize("kind", list(CASES))
def test_hostile_xacro_is_one_model_error(tmp_path, kind, small_memory):
    text, message = CASES[kind]
    path = tmp_path / f"{kind}.xacro"
    path.write_text(text)
    start = time.perf_counter()
    with pytest.raises(cd.ModelError, match=message) as info:
        cd.load(path)
    assert time.perf_counter() - start < xacro_importer.XACRO_SECONDS
    msg = str(info.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg and len(msg) < 400, msg
    assert sys.getrecursionlimit() >= 1000  # the caller's limit is untouched


def test_expanded_output_size_is_limited(tmp_path, monkeypatch):
    monkeypatch.setattr(xacro_importer, "XACRO_OUTPUT", 10_000)
    path = tmp_path / "long.xacro"
    path.write_text(HEAD + '<link name="base"/>' + "".join(f'<link name="l{i}"/>' for i in range(2000)) + "</robot>")
    with pytest.raises(cd.ModelError, match=r"exceeds the size limit"):
        cd.load(path)


@pytest.mark.parametrize("kind", ["recursion", "arg_without_default"])
def test_cli_prints_one_line_and_exits_2(tmp_path, kind):
    path = tmp_path / "bad.xacro"
    path.write_text(CASES[kind][0])
    run = subprocess.run([sys.executable, "-m", "composedyn.cli", "info", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "Traceback" not in run.stderr, run.stderr[-2000:]
    assert len(run.stderr.strip().splitlines()) == 1 and str(path) in run.stderr


def test_deeply_nested_toml_is_one_line(tmp_path):
    path = tmp_path / "deep.toml"
    path.write_text('name = "x"\na = ' + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(cd.ModelError, match="nested deeper") as info:
        cd.load(path)
    assert "\n" not in str(info.value)
    run = subprocess.run([sys.executable, "-m", "composedyn.cli", "info", str(path)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and len(run.stderr.strip().splitlines()) == 1, run.stderr[-2000:]


URDF = """<?xml version="1.0"?>
<!-- an old header said: <!DOCTYPE robot SYSTEM "urdf.dtd"> -->
<robot name="r">
  <link name="base"/>
  <link name="l1"><inertial><mass value="1"/><origin xyz="0.2 0 0"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/></joint>
</robot>"""


def test_doctype_inside_a_comment_is_text():
    r = cd.from_urdf(URDF)
    assert r.joint_names == ("j1",)
    plain = cd.from_urdf(URDF.replace('<!-- an old header said: <!DOCTYPE robot SYSTEM "urdf.dtd"> -->', ""))
    q = np.array([0.3])
    assert np.array_equal(r.mass_matrix(q), plain.mass_matrix(q))
    with pytest.raises(cd.ModelError, match="DOCTYPE"):  # a real declaration is still refused
        cd.from_urdf(URDF.replace("<!-- an old header said: ", "").replace(" -->", ""))


def test_missing_mesh_package_in_xacro_loads_as_in_plain_urdf(tmp_path):
    mesh = '<visual><geometry><mesh filename="package://nowhere_meshes/m.stl"/></geometry></visual>'
    text = URDF.replace('<link name="base"/>', f'<link name="base">{mesh}</link>')
    path = tmp_path / "r.urdf.xacro"
    path.write_text(text.replace('<robot name="r">', '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'))
    q = np.array([0.3])
    assert np.array_equal(cd.load(path).mass_matrix(q), cd.from_urdf(text).mass_matrix(q))
