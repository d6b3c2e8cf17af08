"""A corpus of malformed robot descriptions, generated at test time.

``corpus()`` returns entries ``(name, file name, content, expect, kind)``: ``expect`` is
``"any"`` (a one-line error or a valid robot), ``"load"`` (a valid description that must load)
or ``"error"`` (must be refused); ``kind`` names the failure the entry provokes in a careless
reader ("overflow", "traceback", "unbounded cost", "wrongly refused"), shown with a failure,
or None.
"""

from __future__ import annotations

import re

import numpy as np

LINK = """<link name="{name}"><inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{mass}"/>
<inertia ixx="{ixx}" ixy="{ixy}" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>{extra}</link>"""
JOINT = """<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>
<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>
<limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>{extra}</joint>"""


def link_xml(name="l1", **kw) -> str:
    d = dict(name=name, com="0 0 0.1", mass="1.0", ixx="0.01", ixy="0", iyy="0.01", izz="0.01", extra="")
    d.update(kw)
    return LINK.format(**d)


def joint_xml(name="j1", parent="base", child="l1", **kw) -> str:
    d = dict(name=name, type="revolute", parent=parent, child=child, xyz="0 0 0.1", rpy="0 0 0", axis="0 0 1",
             lower="-1", upper="1", effort="10", velocity="1", extra="")
    d.update(kw)
    return JOINT.format(**d)


def urdf(l1=None, j1=None, body=None, head="") -> str:
    """A three-link chain base -j1- l1 -j2- l2 with l1/j1 attributes replaced, or ``body``."""
    if body is None:
        body = "\n".join([link_xml("base"), link_xml("l1", **(l1 or {})), joint_xml("j1", **(j1 or {})),
                          link_xml("l2"), joint_xml("j2", parent="l1", child="l2", axis="0 1 0")])
    return f'{head}<?xml version="1.0"?>\n<robot name="corpus">\n{body}\n</robot>\n' if not head.startswith(
        "<?xml") else f'{head}\n<robot name="corpus">\n{body}\n</robot>\n'


def _xacro(body: str, head: str = "") -> str:
    return (f'<?xml version="1.0"?>\n<robot name="corpus" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
            f'{head}{body}\n</robot>\n')


VALID_DH = """name = "two"
convention = "standard"
[[links]]
a = 0.3
alpha = 0.0
d = 0.0
theta = 0.0
joint = "revolute"
mass = {mass}
com = {com}
inertia = {inertia}
[[links]]
a = 0.2
alpha = 0.0
d = 0.0
theta = 0.0
joint = "{joint}"
mass = 1.0
com = [-0.1, 0.0, 0.0]
inertia = [[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]
"""


def _dh(mass="1.0", com="[-0.15, 0.0, 0.0]", inertia="[[0.01, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]",
        joint="revolute") -> str:
    return VALID_DH.format(mass=mass, com=com, inertia=inertia, joint=joint)


def corpus() -> list[tuple[str, str, object, str, int | None]]:
    rng = np.random.default_rng(2026)
    valid = urdf()
    e = []

    def add(name, content, expect="any", kind=None, ext="urdf"):
        safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", name)
        e.append((name, f"{len(e):03d}_{safe}.{ext}", content, expect, kind))

    # sanity: valid descriptions load
    add("valid", valid, "load")
    add("valid_bom", "\ufeff" + valid, "any")
    add("doctype_in_comment", urdf(head="<!-- <!DOCTYPE robot> -->\n"), "load", "wrongly refused")
    add("mesh_package_missing_urdf", urdf(l1={"extra": '<visual><geometry><mesh filename="package://nopkg/m.stl"/>'
                                                         '</geometry></visual>'}), "load")
    # masses
    for v in ["-1", "nan", "inf", "1e308", "abc", "", "1e999", "-0", "1e-300", "0x10", "1.0abc"]:
        add(f"mass_{v or 'empty'}", urdf(l1={"mass": v}))
    add("mass_missing", valid.replace(link_xml("l1"), link_xml("l1").replace('<mass value="1.0"/>', "")))
    add("zero_mass_with_inertia", urdf(l1={"mass": "0"}))
    # inertias
    for k, v in [("ixx", "-0.01"), ("ixx", "nan"), ("ixx", "1e308"), ("izz", "5"), ("ixy", "1"), ("ixy", "1e308"),
                 ("iyy", "inf"), ("ixx", "0")]:
        add(f"inertia_{k}_{v}", urdf(l1={k: v}), kind="traceback" if v == "1e308" and k == "ixx" else None)
    add("inertia_missing", valid.replace(link_xml("l1"), link_xml("l1").replace(
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>', "")))
    add("com_huge", urdf(l1={"com": "1e308 0 0"}))
    add("com_nan", urdf(l1={"com": "nan 0 0"}))
    # axes
    for v in ["0 1e200 0", "0 0 0", "nan 0 0", "1 0", "1 0 0 0", "a b c", "1e-320 0 0", "inf 0 0",
              "1e308 1e308 0", "-0 -0 -0", "0 0 1e-200"]:
        add(f"axis_{v}", urdf(j1={"axis": v}), kind="overflow" if v in ("0 1e200 0", "1e308 1e308 0") else None)
    # origins
    for k, v in [("xyz", "1e308 0 0"), ("xyz", "nan 0 0"), ("rpy", "1e300 0 0"), ("xyz", "1 2"), ("rpy", "inf 0 0"),
                 ("xyz", "1e200 1e200 1e200")]:
        add(f"origin_{k}_{v}", urdf(j1={k: v}))
    # joint types and limits
    for v in ["unknown", "", "floating", "planar", "spherical", "REVOLUTE"]:
        add(f"type_{v or 'empty'}", urdf(j1={"type": v}))
    for kw in [{"lower": "1", "upper": "-1"}, {"effort": "-10"}, {"velocity": "nan"}, {"lower": "abc"},
               {"upper": "1e308", "lower": "-1e308"}, {"effort": "inf"}]:
        add("limit_" + "_".join(f"{k}{v}" for k, v in kw.items()), urdf(j1=kw))
    for name, extra in [("damping_negative", '<dynamics damping="-1" friction="0"/>'),
                        ("friction_nan", '<dynamics damping="0" friction="nan"/>'),
                        ("damping_1e308", '<dynamics damping="1e308"/>'), ("mimic_unknown", '<mimic joint="nope"/>'),
                        ("mimic_multiplier_1e200", '<mimic joint="j2" multiplier="1e200"/>'),
                        ("mimic_multiplier_nan", '<mimic joint="j2" multiplier="nan"/>'),
                        ("mimic_itself", '<mimic joint="j1"/>'),
                        ("mimic_offset_inf", '<mimic joint="j2" offset="inf"/>')]:
        add(name, urdf(j1={"extra": extra}), kind="overflow" if "1e200" in extra else None)
    add("mimic_cycle", urdf(body="\n".join([link_xml("base"), link_xml("l1"), link_xml("l2"),
                                             joint_xml("j1", extra='<mimic joint="j2"/>'),
                                             joint_xml("j2", parent="l1", child="l2", extra='<mimic joint="j1"/>')])))
    # structure
    body = "\n".join([link_xml("base"), link_xml("l1"), link_xml("l2")])
    add("cycle", urdf(body=body + joint_xml("j1") + joint_xml("j2", parent="l1", child="l2")
                      + joint_xml("j3", parent="l2", child="base")))
    add("self_loop", urdf(body=body + joint_xml("j1", parent="l1", child="l1")))
    add("duplicate_link", urdf(body=body + link_xml("l1") + joint_xml("j1") + joint_xml("j2", parent="l1", child="l2")))
    add("duplicate_joint", urdf(body=body + joint_xml("j1") + joint_xml("j1", parent="l1", child="l2")))
    add("dangling_parent", urdf(body=body + joint_xml("j1") + joint_xml("j2", parent="nope", child="l2")))
    add("dangling_child", urdf(body=body + joint_xml("j1") + joint_xml("j2", parent="l1", child="nope")))
    add("two_roots", urdf(body=body + joint_xml("j1")))
    add("two_parents", urdf(body=body + joint_xml("j1") + joint_xml("j2", parent="l1", child="l2")
                            + joint_xml("j3", parent="base", child="l2")))
    add("no_links", '<?xml version="1.0"?><robot name="x"/>')
    add("wrong_root", '<?xml version="1.0"?><foo/>')
    add("deep_nesting", '<?xml version="1.0"?><robot name="x">' + "<a>" * 5000 + "</a>" * 5000 + "</robot>")
    add("huge_name", urdf(body=link_xml("b" * 1_000_000)))
    add("bad_utf8", valid.encode().replace(b"l2", b"l\xff\xfe"))
    # XML level
    add("truncated", valid[: len(valid) // 2])
    add("empty", "")
    add("whitespace", "   \n\t\n")
    add("binary_garbage", rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
    add("not_xml", "hello robot")
    add("entity", '<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY m "1.0">]>\n<robot name="x">'
                  + link_xml("base").replace('"1.0"', '"&m;"') + "</robot>")
    add("billion_laughs", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {chr(98 + k)} "{("&" + chr(97 + k) + ";") * 10}">' for k in range(8))
        + ']><robot name="&i;"/>')
    add("external_entity", '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                           '<robot name="&x;"/>')
    add("xinclude", '<?xml version="1.0"?><robot name="x" xmlns:xi="http://www.w3.org/2001/XInclude">'
                    '<xi:include href="/etc/passwd" parse="text"/></robot>')
    # xacro
    add("xacro_valid", _xacro(valid.split('<robot name="corpus">\n')[1].split("\n</robot>")[0]), "load",
        ext="urdf.xacro")
    add("xacro_self_include", _xacro('<xacro:include filename="SELF"/>' + link_xml("base")), kind="traceback",
        ext="urdf.xacro")
    add("xacro_recursion", _xacro('<xacro:macro name="m"><xacro:m/></xacro:macro><xacro:m/>'), kind="traceback",
        ext="urdf.xacro")
    add("xacro_arg_without_default", _xacro('<xacro:arg name="x"/>' + link_xml("$(arg x)")), kind="traceback",
        ext="urdf.xacro")
    add("xacro_undefined_property", _xacro(link_xml("base", mass="${nope}")), ext="urdf.xacro")
    add("xacro_division_by_zero", _xacro(link_xml("base", mass="${1/0}")), ext="urdf.xacro")
    add("xacro_missing_include", _xacro('<xacro:include filename="/nonexistent/x.xacro"/>'), ext="urdf.xacro")
    add("xacro_python_eval", _xacro(link_xml("base", mass="${__import__('os').getpid()}")), ext="urdf.xacro")
    add("xacro_mesh_package_missing", _xacro(valid.split('<robot name="corpus">\n')[1].split("\n</robot>")[0]
                                             .replace('<inertial>', '<visual><geometry><mesh filename="package://'
                                                      'nopkg/m.stl"/></geometry></visual><inertial>', 1)),
        "load", "wrongly refused", ext="urdf.xacro")
    add("xacro_doubling", _xacro('<xacro:property name="p0" value="ab"/>' + "".join(
        f'<xacro:property name="p{k + 1}" value="${{p{k}}}${{p{k}}}"/>' for k in range(40))
        + '<link name="${p40}"/>'), kind="unbounded cost", ext="urdf.xacro")
    # DH tables
    add("dh_valid", _dh(), "load", ext="toml")
    add("dh_empty", "", ext="toml")
    add("dh_garbage", "[[rows\n a = ", ext="toml")
    add("dh_nested", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", kind="traceback", ext="toml")
    add("dh_no_rows", 'name = "x"\n', ext="toml")
    for kw in [{"mass": "-1.0"}, {"mass": "nan"}, {"mass": "inf"}, {"mass": "1e308"}, {"mass": '"heavy"'},
               {"com": "[0.0, 0.0]"}, {"com": "[nan, 0.0, 0.0]"}, {"inertia": "[[0.01, 0], [0, 0.01]]"},
               {"inertia": "[[1e308, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]"},
               {"inertia": "[[-1, 0, 0], [0, 0.01, 0], [0, 0, 0.01]]"}, {"joint": "weird"}, {"joint": "fixed"}]:
        add("dh_" + "_".join(f"{k}{v}" for k, v in kw.items()), _dh(**kw), ext="toml")
    add("dh_a_string", _dh().replace("a = 0.3", 'a = "x"'), ext="toml")
    add("dh_alpha_huge", _dh().replace("alpha = 0.0", "alpha = 1e308", 1), ext="toml")
    add("dh_convention", _dh().replace('"standard"', '"weird"'), ext="toml")
    add("dh_links_table", 'links = 5\n', ext="toml")
    # formats
    add("toml_in_urdf", _dh(), ext="urdf")
    add("urdf_in_toml", valid, ext="toml")
    add("unknown_extension", valid, "any", ext="txt")
    return e
