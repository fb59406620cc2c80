"""Module index maps checked against MuJoCo's own model fields, for every bundled body under
every partition it offers, the gadget (all joint types and transmissions) and a foreign MJCF."""

import mujoco
import numpy as np
import pytest

from modular_ppo.body import BodyGraph, bundled_names, load_body
from modular_ppo.body.partition import named_partitions
from modular_ppo.body.rules import RULES


def assert_index_maps_match_mujoco(graph: BodyGraph) -> None:
    m = graph.model
    modules = list(graph.modules.values())
    actuators = np.concatenate([mod.actuator_ids for mod in modules])
    assert sorted(actuators.tolist()) == list(range(m.nu)), "every actuator exactly once"
    bodies = np.concatenate([mod.body_ids for mod in modules])
    assert len(set(bodies.tolist())) == bodies.size, "no body in two modules"
    qpos_size = np.diff(np.append(m.jnt_qposadr, m.nq))
    dof_size = np.diff(np.append(m.jnt_dofadr, m.nv))
    for i, mod in enumerate(modules):
        ids = [m.body(b).id for b in mod.bodies]
        assert mod.body_ids.tolist() == sorted(ids)
        joints = np.flatnonzero(np.isin(m.jnt_bodyid, mod.body_ids))
        assert mod.joint_ids.tolist() == joints.tolist()
        assert list(mod.joints) == [m.joint(j).name or f"joint#{j}" for j in joints]
        qpos = [a for j in joints for a in range(m.jnt_qposadr[j], m.jnt_qposadr[j] + qpos_size[j])]
        dofs = [a for j in joints for a in range(m.jnt_dofadr[j], m.jnt_dofadr[j] + dof_size[j])]
        assert mod.qpos_adr.tolist() == sorted(qpos)
        assert mod.qvel_adr.tolist() == sorted(dofs)
        assert np.isin(m.dof_bodyid[mod.qvel_adr], mod.body_ids).all()
        for a in mod.actuator_ids:
            target = m.actuator_trnid[a, 0]
            if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_JOINT:
                assert m.jnt_bodyid[target] in mod.body_ids
            if m.actuator_trntype[a] == mujoco.mjtTrn.mjTRN_SITE:
                assert m.site_bodyid[target] in mod.body_ids
        root = m.body(mod.root_body).id
        above = m.body_parentid[root]
        if mod.parent is None:
            assert above == 0
        else:
            parent = graph.modules[mod.parent]
            assert above in parent.body_ids
            assert graph.module_index(mod.parent) < i, "parents come before children"
            assert graph.hop_distance[i, graph.module_index(mod.parent)] == 1
        for b in mod.body_ids:
            inside = m.body_parentid[b] in mod.body_ids
            assert inside != (m.body(int(b)).name in mod.root_bodies)
        assert all(graph.modules[c].parent == mod.name for c in mod.children)
    hop = graph.hop_distance
    assert (hop == hop.T).all() and (np.diag(hop) == 0).all()
    assert graph.modules[graph.root_module].body_ids.min() == graph.root_body_id


def partitions_of(name: str) -> list:
    return [None, *named_partitions(load_body(name).model), *RULES]


CASES = [(name, p) for name in bundled_names() for p in partitions_of(name)]


@pytest.mark.parametrize(("name", "partition"), CASES, ids=[f"{n}:{p}" for n, p in CASES])
def test_bundled_body_index_maps_match_mujoco(name, partition):
    graph = load_body(name, partition)
    assert_index_maps_match_mujoco(graph)
    qpos = np.concatenate([mod.qpos_adr for mod in graph.modules.values()])
    assert sorted(qpos.tolist()) == list(range(graph.model.nq)), "every qpos entry once"


@pytest.mark.parametrize("partition", [None, "per_actuated_body"])
def test_foreign_humanoid_index_maps_match_mujoco(foreign_humanoid, partition):
    graph = BodyGraph.from_mjcf(foreign_humanoid, partition)
    assert_index_maps_match_mujoco(graph)
    assert graph.name == "Humanoid"
    assert graph.modules[graph.root_module].joints == ("root",)


def test_foreign_humanoid_loads_from_string_and_spec_alike(foreign_humanoid):
    by_path = BodyGraph.from_mjcf(foreign_humanoid)
    by_string = BodyGraph.from_mjcf(foreign_humanoid.read_text())
    by_spec = BodyGraph.from_mjcf(mujoco.MjSpec.from_file(str(foreign_humanoid)))
    for graph in (by_string, by_spec):
        assert graph.partition_annotation() == by_path.partition_annotation()
        assert graph.partition_of_actuators() == by_path.partition_of_actuators()


@pytest.mark.parametrize("partition", [None, "per_actuated_body"])
def test_gadget_index_maps_match_mujoco(gadget_xml, partition):
    assert_index_maps_match_mujoco(BodyGraph.from_mjcf(gadget_xml, partition))
