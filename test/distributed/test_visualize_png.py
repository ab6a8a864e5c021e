"""visualize(..., path=...) writes the sharding grid as a PNG: a valid image of exactly the grid's
size (CELL_PX per cell, TITLE_PX for the title), one colour per set of devices, and the text it
returns is the same as without a path. Cases: every placement of a 2-D array on 2-D meshes
(hypothesis), and a 1-D array."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spmdkit.distributed import DistError, ProcessMesh, Replicate, Shard, visualize
from spmdkit.distributed.visualize import CELL_PX, TITLE_PX, write_png

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _cells(text: str) -> list[list[str]]:
    """The cell labels of the text picture, row by row."""
    return [[c.strip() for c in line.strip("|").split("|")] for line in text.splitlines() if line.startswith("|")]


def _check_png(path, cells, titled=True):
    from matplotlib import image
    assert path.read_bytes()[:8] == PNG_MAGIC
    img = image.imread(str(path))
    top = TITLE_PX if titled else 0
    assert img.shape[:2] == (top + len(cells) * CELL_PX, len(cells[0]) * CELL_PX)
    # a pixel near each cell's corner (off the label text): equal labels, equal colours; else different
    colour = {}
    for r, row in enumerate(cells):
        for c, label in enumerate(row):
            px = tuple(np.round(img[top + r * CELL_PX + 8, c * CELL_PX + 8, :3], 3))
            colour.setdefault(label, set()).add(px)
    assert all(len(v) == 1 for v in colour.values()), colour
    assert len({next(iter(v)) for v in colour.values()}) == len(colour)


@settings(max_examples=12, deadline=None)
@given(mesh_shape=st.sampled_from([(2, 2), (2, 4), (4, 2), (1, 4)]),
       placement=st.lists(st.sampled_from([Replicate(), Shard(0), Shard(1)]), min_size=2, max_size=2))
def test_png_is_the_grid(tmp_path_factory, mesh_shape, placement):
    mesh = ProcessMesh(shape=mesh_shape, dim_names=["a", "b"])
    path = tmp_path_factory.mktemp("png") / "x.png"
    text = visualize((8, 8), mesh, placement, name="x", path=path)
    assert text == visualize((8, 8), mesh, placement, name="x")
    cells = _cells(text)
    rows = np.prod([n for n, p in zip(mesh_shape, placement) if p == Shard(0)], initial=1)
    cols = np.prod([n for n, p in zip(mesh_shape, placement) if p == Shard(1)], initial=1)
    assert (len(cells), len(cells[0])) == (rows, cols)
    _check_png(path, cells)


def test_png_of_a_one_d_array(tmp_path):
    mesh = ProcessMesh([[0, 1], [2, 3]], dim_names=["dp", "mp"])
    text = visualize((8,), mesh, [Shard(0), Replicate()], path=tmp_path / "v.png")
    assert _cells(text) == [["0 1", "2 3"]]
    _check_png(tmp_path / "v.png", [["0 1", "2 3"]])


def test_write_png_without_title_and_empty_grid(tmp_path):
    write_png(tmp_path / "g.png", [["0", "1", "0"]])
    _check_png(tmp_path / "g.png", [["0", "1", "0"]], titled=False)
    with pytest.raises(DistError, match="nothing to draw"):
        write_png(tmp_path / "e.png", [])
