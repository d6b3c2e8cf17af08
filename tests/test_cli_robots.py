"""``composedyn robots`` marks the bundled closed chains with their actuated joint count."""

import composedyn as cd
from composedyn.cli import main
from composedyn.robots import names


def test_robots_lists_closed_chains_with_actuated_joints(capsys):
    assert main(["robots"]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert set(lines) == set(names())
    for name in names():
        try:
            chain = cd.load_closed_chain(name)
        except cd.ModelError:  # an open tree: no loop-closure description
            assert "closed chain" not in lines[name] and f"{cd.load(name).dof} dof" in lines[name]
            continue
        assert f"closed chain, {chain.dof} actuated of {chain.robot.dof} tree joints" in lines[name]
