"""A run directory's body folder: the body's name, shortened when a run on many bodies would
make it longer than a file system allows (smp-cheetah++'s 15 bodies joined by "+")."""

from modular_ppo.body.smp import BODY_SETS
from modular_ppo.runs.run_dir import MAX_BODY_FOLDER, body_folder, new_run_dir


def test_a_short_name_is_kept_and_a_long_one_shortened(tmp_path):
    two = "smp-walker_2_main+smp-walker_4_main"
    assert body_folder(two) == two
    assert body_folder("bodies/centipede.xml") == "bodies_centipede"
    cheetahs = "+".join(BODY_SETS["smp-cheetah++"])
    assert len(cheetahs) > 255
    folder = body_folder(cheetahs)
    assert len(folder.encode()) <= MAX_BODY_FOLDER
    kept, rest = folder.rsplit("+", 1)
    assert cheetahs.startswith(kept + "+")
    left_out = len(BODY_SETS["smp-cheetah++"]) - len(kept.split("+"))
    assert rest.startswith(f"{left_out}-more-") and len(rest) == len(f"{left_out}-more-") + 8
    # Two sets that share their leading bodies still get folders of their own.
    others = cheetahs + "+smp-walker_2_main"
    assert body_folder(others) != folder
    assert new_run_dir(tmp_path, cheetahs, "seed0") == tmp_path / folder / "seed0"
    assert (tmp_path / folder / "seed0").is_dir()
