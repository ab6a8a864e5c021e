"""spmdkit.distributed.save_state_dict / load_state_dict (issue 16).

- Resume across meshes: the GPT example (AdamW) trained 2 steps on a 2x2 Megatron layout, saved,
  loaded onto a 2x4 mesh with other placements (every param's dim 0 over mp, the batch over both
  dims) and trained 2 more steps: the losses equal the uninterrupted run's within 1e-6, every
  loaded leaf has the layout of `like`'s leaf and the saved value bit for bit. (8 virtual devices,
  a child process.)
- Atomic saves: a process killed mid-save (after all new data is written, before the commit
  record) leaves the previous checkpoint loadable; the next save clears what the killed one left.
- Damage and mismatch: CheckpointError naming the leaf path (missing leaf, wrong shape or dtype,
  truncated or deleted data file, unreadable metadata, a folder that is no checkpoint).
- Round trips of arbitrary pytrees of arrays (hypothesis), here on one device.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spmdkit.distributed import CheckpointError, DistError, load_state_dict, save_state_dict
from spmdkit.distributed.checkpoint import RECORD, read_record, wait_for_cleanup

sys.path.insert(0, str(Path(__file__).parent))
from child_process import child_env  # noqa: E402
from dist_support import has_jax_rules, has_propagation, run_worker  # noqa: E402

HERE = Path(__file__).parent
WORKER = HERE / "checkpoint_worker.py"


# ----------------------------------------------------------------------------- across meshes


@pytest.mark.skipif(not (has_jax_rules() and has_propagation()), reason="this build of spmdkit._core has no "
                    "jax.* rules or no propagation engine")
def test_gpt_saved_on_2x2_resumes_on_2x4_with_other_placements(tmp_path):
    [row] = run_worker(WORKER, ["resume", "gpt", str(tmp_path / "ckpt")], timeout=600)
    print(json.dumps(row))
    assert row["placements_2x2"] != row["placements_2x4"]
    assert row["loaded_layout_is_like"] and row["loaded_value_diff"] == 0.0
    straight, resumed = row["uninterrupted"], row["resumed"]
    assert straight[-1] < straight[0]       # it trains
    assert max(abs(a - b) for a, b in zip(resumed, straight[2:])) <= 1e-6


# ----------------------------------------------------------------------------- atomic saves


def _state(scale: float) -> dict:
    """What the kill worker saves (its first save: scale 1)."""
    return {"w": np.arange(64 * 32, dtype=np.float32).reshape(64, 32) * scale, "b": [np.full(5, scale, np.float32)],
            "step": np.int32(scale)}


def _like(state):
    return jax.tree_util.tree_map(np.zeros_like, state)


def _assert_equal_trees(got, want):
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    for a, b in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        assert np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_a_process_killed_mid_save_leaves_the_previous_checkpoint(tmp_path):
    folder = tmp_path / "ckpt"
    proc = subprocess.Popen([sys.executable, str(WORKER), "kill", "commit", str(folder)], env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in proc.stdout:        # the worker pauses after writing all of state B's data
            lines.append(line)
            if line.startswith("checkpoint paused at commit"):
                break
        else:
            raise AssertionError(f"the worker ended before pausing: {lines}\n{proc.stderr.read()[-3000:]}")
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    # the killed save had written its data: a second state folder beside the committed one
    committed = read_record(folder)["directory"]
    uncommitted = [p for p in folder.iterdir() if p.is_dir() and p.name != committed]
    assert committed == "state-000001" and len(uncommitted) == 1
    assert any(f.is_file() for f in uncommitted[0].rglob("*"))
    _assert_equal_trees(load_state_dict(folder, _like(_state(1.0))), _state(1.0))
    # the next save commits and clears the killed save's folder
    save_state_dict(_state(3.0), folder)
    wait_for_cleanup()
    assert [p.name for p in folder.iterdir() if p.is_dir()] == [read_record(folder)["directory"]]
    _assert_equal_trees(load_state_dict(folder, _like(_state(3.0))), _state(3.0))


def test_saving_again_replaces_the_checkpoint_and_keeps_one_folder(tmp_path):
    save_state_dict(_state(1.0), tmp_path)
    save_state_dict(_state(2.0), tmp_path)
    wait_for_cleanup()
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD, "state-000002"]
    _assert_equal_trees(load_state_dict(tmp_path, _like(_state(2.0))), _state(2.0))


def test_what_a_save_killed_inside_orbax_leaves_is_ignored_and_cleared(tmp_path):
    # orbax writes into NAME.orbax-checkpoint-tmp-* and renames it when done; killed before
    # that, the half-written folder stays (and, for a first save, no record)
    def leftover(n):
        half = tmp_path / f"state-{n:06d}.orbax-checkpoint-tmp-1795750383"
        half.mkdir()
        (half / "junk").write_bytes(b"\x00" * 10)
    leftover(1)
    with pytest.raises(CheckpointError, match="not a checkpoint"):
        load_state_dict(tmp_path, _like(_state(1.0)))
    save_state_dict(_state(1.0), tmp_path)
    leftover(2)
    (tmp_path / f".{RECORD}.tmp-123").write_text("{")
    _assert_equal_trees(load_state_dict(tmp_path, _like(_state(1.0))), _state(1.0))
    save_state_dict(_state(2.0), tmp_path)
    wait_for_cleanup()
    assert sorted(p.name for p in tmp_path.iterdir()) == [RECORD, "state-000002"]
    _assert_equal_trees(load_state_dict(tmp_path, _like(_state(2.0))), _state(2.0))


# ----------------------------------------------------------------------------- errors name the leaf


@pytest.fixture
def saved(tmp_path):
    state = {"params": {"w": jnp.arange(12.0).reshape(3, 4), "b": jnp.ones(4)}, "step": np.int32(7)}
    save_state_dict(state, tmp_path)
    return tmp_path, state


def _leaf_folder(folder: Path, leaf: str) -> Path:
    record = read_record(folder)
    return folder / record["directory"] / record["leaves"][leaf]["name"]


def _chunk(folder: Path, leaf: str) -> Path:
    return next(f for f in sorted(_leaf_folder(folder, leaf).iterdir()) if not f.name.startswith("."))


def test_a_missing_leaf_is_named(saved):
    folder, state = saved
    like = {**state, "opt": {"m": np.zeros(4, np.float32)}}
    with pytest.raises(CheckpointError, match=r"value \['opt'\]\['m'\]: not in the checkpoint"):
        load_state_dict(folder, like)


def test_other_shape_or_dtype_is_named(saved):
    folder, state = saved
    with pytest.raises(CheckpointError, match=r"\['params'\]\['w'\]: the checkpoint holds shape \[3, 4\], like asks "
                                              r"for \[4, 3\]"):
        load_state_dict(folder, {"params": {"w": jax.ShapeDtypeStruct((4, 3), jnp.float32)}})
    with pytest.raises(CheckpointError, match=r"\['step'\]: the checkpoint holds dtype int32, like asks for float32"):
        load_state_dict(folder, {"step": np.float32(0)})


def test_a_truncated_or_deleted_data_file_is_named(saved):
    folder, _ = saved
    chunk = _chunk(folder, "['params']['w']")
    chunk.write_bytes(chunk.read_bytes()[:5])
    with pytest.raises(CheckpointError, match=r"\['params'\]\['w'\]: data file .* is 5 bytes, written as \d+"):
        load_state_dict(folder, {"params": {"w": np.zeros((3, 4), np.float32)}})
    # the other leaves still load
    np.testing.assert_array_equal(load_state_dict(folder, {"params": {"b": np.zeros(4, np.float32)}})["params"]["b"],
                                  np.ones(4, np.float32))
    _chunk(folder, "['params']['b']").unlink()
    with pytest.raises(CheckpointError, match=r"\['params'\]\['b'\]: data file .* is missing"):
        load_state_dict(folder, {"params": {"b": np.zeros(4, np.float32)}})


# orbax's restore leaves a tensorstore callback to a closed event loop behind when it fails
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_unreadable_leaf_metadata_is_named(saved):
    # same size, other bytes: the sizes agree, tensorstore refuses the array's metadata
    folder, _ = saved
    meta = _leaf_folder(folder, "['params']['b']") / ".zarray"
    meta.write_bytes(b"\x00" * meta.stat().st_size)
    with pytest.raises(CheckpointError, match=r"value \['params'\]\['b'\]: cannot read it"):
        load_state_dict(folder, {"params": {"b": np.zeros(4, np.float32), "w": np.zeros((3, 4), np.float32)}})


def test_a_folder_that_is_no_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match=r"is not a checkpoint \(no CHECKPOINT record"):
        load_state_dict(tmp_path / "nowhere", {"w": np.zeros(2)})
    data = save_state_dict({"w": np.ones(2)}, tmp_path / "ck")  # the data folder, not the checkpoint
    with pytest.raises(CheckpointError, match=r"is the data folder of the checkpoint in .*ck: load that folder"):
        load_state_dict(data, {"w": np.zeros(2)})
    np.testing.assert_array_equal(load_state_dict(tmp_path / "ck", {"w": np.zeros(2)})["w"], np.ones(2))
    (tmp_path / RECORD).write_text("{not json")
    with pytest.raises(CheckpointError, match="record is unreadable"):
        load_state_dict(tmp_path, {"w": np.zeros(2)})
    (tmp_path / RECORD).write_text(json.dumps({"format": "something else"}))
    with pytest.raises(CheckpointError, match="not a spmdkit-checkpoint record"):
        load_state_dict(tmp_path, {"w": np.zeros(2)})
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    with pytest.raises(CheckpointError, match="other files in it, not a checkpoint: refusing"):
        save_state_dict({"w": np.zeros(2)}, other)
    assert issubclass(CheckpointError, DistError)


def test_leaves_that_are_no_data_come_from_like(tmp_path):
    """A function or a name among the leaves (an equinox module's activations) is not saved, as
    eqx.tree_serialise_leaves skips them: a load takes it from `like`. A like leaf that is no
    data where the checkpoint holds an array is an error, not like's value; an object array
    cannot be saved."""
    save_state_dict({"f": print, "name": "run1", "w": np.arange(2.0)}, tmp_path / "a")
    assert read_record(tmp_path / "a")["skipped"] == ["['f']", "['name']"]
    back = load_state_dict(tmp_path / "a", {"f": len, "name": "run2", "w": np.zeros(2)})
    assert back["f"] is len and back["name"] == "run2"
    np.testing.assert_array_equal(back["w"], np.arange(2.0))
    save_state_dict({"f": print}, tmp_path / "b")  # nothing but such leaves
    assert load_state_dict(tmp_path / "b", {"f": print}) == {"f": print}
    with pytest.raises(CheckpointError, match=r"value \['w'\]: like's leaf is a str"):
        load_state_dict(tmp_path / "a", {"w": "zeros"})
    with pytest.raises(CheckpointError, match=r"value \['o'\]: cannot save a leaf of type ndarray: not an array"):
        save_state_dict({"o": np.array([object()], dtype=object)}, tmp_path / "c")


def test_an_equinox_module_round_trips(tmp_path):
    eqx = pytest.importorskip("equinox")
    model = eqx.nn.MLP(4, 2, 8, 2, activation=jax.nn.gelu, key=jax.random.PRNGKey(0))
    save_state_dict({"model": model, "step": 7}, tmp_path)
    like = eqx.nn.MLP(4, 2, 8, 2, activation=jax.nn.gelu, key=jax.random.PRNGKey(1))
    back = load_state_dict(tmp_path, {"model": like, "step": 0})
    assert back["step"] == 7 and back["model"].activation is jax.nn.gelu
    for got, want in zip(jax.tree_util.tree_leaves(eqx.filter(back["model"], eqx.is_array)),
                         jax.tree_util.tree_leaves(eqx.filter(model, eqx.is_array))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# ----------------------------------------------------------------------------- round trips

_DTYPES = [np.float32, np.int32, np.bool_, np.float16, np.uint8]
_arrays = st.builds(
    lambda shape, dtype, seed: np.abs(np.random.default_rng(seed).normal(size=shape) * 7).astype(dtype),
    st.lists(st.integers(1, 4), max_size=3).map(tuple), st.sampled_from(_DTYPES), st.integers(0, 2**16))
_trees = st.recursive(_arrays, lambda inner: st.one_of(
    st.lists(inner, min_size=1, max_size=3),
    st.dictionaries(st.text("abc.[]'_ ", min_size=1, max_size=4), inner, min_size=1, max_size=3)), max_leaves=6)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=_trees)
def test_any_pytree_of_arrays_loads_back_as_saved(tmp_path_factory, tree):
    folder = tmp_path_factory.mktemp("ckpt")
    save_state_dict(tree, folder)
    # numpy leaves come back as numpy arrays; ShapeDtypeStructs with a sharding as jax.Arrays on it
    _assert_equal_trees(load_state_dict(folder, _like(tree)), tree)
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    like = jax.tree_util.tree_map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=device), tree)
    got = load_state_dict(folder, like)
    assert all(isinstance(x, jax.Array) and x.sharding == device for x in jax.tree_util.tree_leaves(got))
    _assert_equal_trees(got, tree)


def test_an_optax_state_of_named_tuples_loads_into_a_fresh_one(tmp_path):
    # key paths through namedtuples and tuples (`[0].mu['w']`), as optimizer states have them
    optax = pytest.importorskip("optax")
    params = {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.ones(3)}
    opt = optax.adamw(0.1)
    state = opt.init(params)
    _, state = opt.update(jax.tree_util.tree_map(jnp.ones_like, params), state, params)   # count 1, mu != 0
    save_state_dict({"params": params, "opt": state}, tmp_path)
    fresh = {"params": jax.tree_util.tree_map(jnp.zeros_like, params), "opt": opt.init(params)}
    got = load_state_dict(tmp_path, fresh)
    assert type(got["opt"][0]) is type(state[0])
    _assert_equal_trees(got, {"params": params, "opt": state})



@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_prng_key_arrays_load_back_as_key_arrays(tmp_path, impl):
    # a training state keeps its typed PRNG key (jax.random.key): saved as its uint32 data, loaded
    # back as a key array of the same implementation, bit for bit, on like's layout
    keys = jax.random.split(jax.random.key(7, impl=impl), 4)
    state = {"key": jax.random.key(3, impl=impl), "keys": keys, "w": jnp.ones(3)}
    save_state_dict(state, tmp_path)
    assert read_record(tmp_path)["leaves"]["['keys']"]["dtype"] == str(keys.dtype)
    device = jax.sharding.SingleDeviceSharding(jax.devices()[0])
    fresh = {"key": jax.random.key(0, impl=impl),
             "keys": jax.ShapeDtypeStruct(keys.shape, keys.dtype, sharding=device), "w": jnp.zeros(3)}
    got = load_state_dict(tmp_path, fresh)
    for name in ("key", "keys"):
        assert got[name].dtype == state[name].dtype and got[name].shape == state[name].shape
        np.testing.assert_array_equal(jax.random.key_data(got[name]), jax.random.key_data(state[name]))
    assert got["keys"].sharding == device
    # the draws from the loaded key are the saved key's draws
    np.testing.assert_array_equal(jax.random.normal(got["key"], (5,)), jax.random.normal(state["key"], (5,)))
    other = "rbg" if impl == "threefry2x32" else "threefry2x32"
    with pytest.raises(CheckpointError, match=r"key<") as info:
        load_state_dict(tmp_path, dict(fresh, key=jax.random.key(0, impl=other)))
    assert info.value.value == "['key']"
