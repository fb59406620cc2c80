"""The tiny body of the reliability and CLI tests (a module of its own name, on sys.path
for tests/conftest.py)."""

TINY_BODY = """
<mujoco model="{name}">
  <option timestep="0.01" {option}/>
  {custom}
  <worldbody>
    {world}
    <body name="base" pos="0 0 0.5">
      <joint name="slide" type="slide" axis="1 0 0"/>
      <geom name="base_geom" type="capsule" fromto="0 0 0 0.2 0 0" size="0.05"
            contype="0" conaffinity="0"/>
      {base}
      <body name="arm" pos="0.2 0 0">
        <joint name="elbow" type="hinge" axis="0 1 0" range="-90 90"/>
        <geom name="arm_geom" type="capsule" fromto="0 0 0 0.2 0 0" size="0.05"
              contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <actuator>{actuators}</actuator>
</mujoco>
"""
"""Two modules (base, arm), one motor each, no contacts: the cheapest MJX body to compile.
The fields let catalog cases break it in one place."""

TINY_ACTUATORS = ('<motor name="push" joint="slide" ctrlrange="-1 1" gear="10"/>'
                  '<motor name="bend" joint="elbow" ctrlrange="-1 1" gear="5"/>')


def tiny_xml(name: str = "tiny", option: str = "", custom: str = "", world: str = "",
             base: str = "", actuators: str = TINY_ACTUATORS) -> str:
    return TINY_BODY.format(name=name, option=option, custom=custom, world=world, base=base,
                            actuators=actuators)


def tiny_run_config(tmp_path_factory, **changes):
    """A TrainRunConfig of the tiny body (written to a temporary folder) with 4 envs x 4
    steps per iteration, 48 steps in all, evaluations every 32 steps, no video; `changes`
    replace its fields."""
    from modular_ppo.ppo import EvalConfig, PPOConfig
    from modular_ppo.runs import TrainRunConfig

    body = tmp_path_factory.mktemp("bodies") / "tiny.xml"
    body.write_text(tiny_xml())
    fields = dict(
        body=str(body), backend="cpu",
        ppo=PPOConfig(n_envs=4, n_minibatches=2, rollout_length=4, n_epochs=1, total_steps=48),
        eval=EvalConfig(n_envs=2, episode_length=4), eval_every_steps=32,
        checkpoint_every_steps=16, video=False, runs_root=tmp_path_factory.mktemp("runs"))
    return TrainRunConfig(**{**fields, **changes})
