"""The parts of the charlm run that need no mesh: the text (the stdlib's sources, sorted, cut),
the batches (a function of the step only, next-byte targets), and the checkpoint files (round
trip; a checkpoint of another model is refused naming the leaf)."""
from __future__ import annotations

import sysconfig

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spmdkit.examples import charlm


def test_corpus_is_the_sorted_stdlib_sources():
    files = charlm.corpus_files()
    assert files == sorted(files) and all(f.suffix == ".py" for f in files)
    assert str(files[0].parent) == sysconfig.get_paths()["stdlib"]
    data = charlm.corpus(50_000)
    expected = b"".join(f.read_bytes() for f in files[:40])[:50_000]
    assert data.dtype == np.uint8 and data.tobytes() == expected


@settings(max_examples=20, deadline=None)
@given(step=st.integers(0, 10_000), batch=st.sampled_from([1, 4, 16]), seq=st.sampled_from([8, 64]))
def test_batches_depend_on_the_step_only(step, batch, seq):
    data = charlm.corpus(50_000)
    x, y = charlm.batch_at(data, step, batch, seq, seed=0)
    x2, y2 = charlm.batch_at(data, step, batch, seq, seed=0)
    assert x.shape == y.shape == (batch, seq) and x.dtype == np.int32
    assert np.array_equal(x, x2) and np.array_equal(y, y2)
    assert np.array_equal(x[:, 1:], y[:, :-1])                          # targets: the next byte
    text = data.tobytes()
    assert all(bytes(row.astype(np.uint8)) in text for row in x)       # windows of the text
    assert not np.array_equal(charlm.batch_at(data, step + 1, batch, seq, 0)[0], x)   # another step, another batch


def test_checkpoint_round_trip_and_mismatch(tmp_path):
    state = {"params": {"w": jnp.arange(6.0).reshape(2, 3), "b": jnp.zeros(3)},
             "opt": {"m": {"w": jnp.ones((2, 3)), "b": jnp.ones(3)}, "t": jnp.float32(4)}}
    history = {"loss": [3.0, 2.5], "ref_loss": [3.0, 2.5]}
    path = charlm.save_checkpoint(tmp_path, 2, state, history)
    assert path == tmp_path / "step_0000002.npz" and not list(tmp_path.glob("*.tmp"))
    charlm.save_checkpoint(tmp_path, 10, state, history)
    assert charlm.latest_checkpoint(tmp_path).name == "step_0000010.npz"
    step, loaded, hist = charlm.load_checkpoint(path, state)
    assert step == 2 and hist == history
    for a, b in zip(*(np.asarray(v) for v in (loaded["params"]["w"], state["params"]["w"]))):
        assert np.array_equal(a, b)
    assert float(loaded["opt"]["t"]) == 4.0
    other = {**state, "params": {"w": jnp.zeros((3, 3)), "b": jnp.zeros(3)}}
    with pytest.raises(ValueError, match=r"leaf \"state/params\['w'\]\" is float32\[2, 3\]"):
        charlm.load_checkpoint(path, other)
    with pytest.raises(ValueError, match=r"no leaf \"state/extra\['x'\]\""):
        charlm.load_checkpoint(path, {**state, "extra": {"x": jnp.zeros(1)}})
    assert charlm.latest_checkpoint(tmp_path / "missing") is None
