"""A terminal picture of which devices hold which block of a 1-D or 2-D array (plain text, like
jax.debug.visualize_array_sharding): one cell per distinct block, labelled with the ids of the
devices that hold it; a 1-D array is drawn as one row. With `path=...` the same grid is also
written as a PNG (matplotlib, Agg): CELL_PX x CELL_PX pixels per cell below a TITLE_PX strip,
one colour per set of devices."""
from __future__ import annotations

from .errors import DistError


def _bounds(sl: slice, n: int) -> tuple[int, int]:
    start, stop, _ = sl.indices(n)
    return start, stop


CELL_PX, TITLE_PX, DPI = 80, 30, 100


def render_blocks(shape, device_slices: dict, title: str | None = None, path=None) -> str:
    """The grid of `device_slices` (device id -> tuple of slices of the global array); with
    `path`, also written there as a PNG."""
    shape = tuple(int(s) for s in shape)
    if len(shape) > 2:
        raise DistError(f"can draw 1-D and 2-D arrays only, got shape {list(shape)}")
    dims = shape if len(shape) == 2 else (1,) + shape if shape else (1, 1)
    blocks = {}
    for dev, slices in device_slices.items():
        slices = tuple(slices) if len(shape) == 2 else (slice(0, 1),) + tuple(slices) if shape else \
            (slice(0, 1), slice(0, 1))
        key = (_bounds(slices[0], dims[0]), _bounds(slices[1], dims[1]))
        blocks.setdefault(key, []).append(int(dev))
    rows = sorted({k[0] for k in blocks})
    cols = sorted({k[1] for k in blocks})
    labels = {k: " ".join(str(d) for d in sorted(v)) for k, v in blocks.items()}
    width = max(len(l) for l in labels.values()) + 2
    line = "+" + "+".join("-" * width for _ in cols) + "+"
    out = [title] if title else []
    out.append(line)
    for r in rows:
        cells = [labels.get((r, c), "").center(width) for c in cols]
        out.append("|" + "|".join(cells) + "|")
        out.append(line)
    legend = f"{len(rows)}x{len(cols)} blocks of {list(shape)}"
    if rows and cols:
        legend += f"; block {rows[0][1] - rows[0][0]}x{cols[0][1] - cols[0][0]}" if len(shape) == 2 else \
            f"; block {cols[0][1] - cols[0][0]}"
    out.append(legend + "; cells list device ids")
    if path is not None:
        write_png(path, [[labels.get((r, c), "") for c in cols] for r in rows], title)
    return "\n".join(out)


def write_png(path, cells: list[list[str]], title: str | None = None) -> None:
    """A grid of labelled cells as a PNG of exactly (TITLE_PX if title) + rows*CELL_PX by
    cols*CELL_PX pixels; cells with the same label share a colour."""
    import matplotlib
    from matplotlib.figure import Figure   # no pyplot: no global figure state, any backend set
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    n_rows, n_cols = len(cells), len(cells[0]) if cells else 0
    if not n_rows or not n_cols:
        raise DistError("visualize: nothing to draw (no blocks)")
    top = TITLE_PX if title else 0
    height, width = top + n_rows * CELL_PX, n_cols * CELL_PX
    fig = Figure(figsize=(width / DPI, height / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_xlim(0, width)
    ax.set_ylim(height, 0)
    ax.axis("off")
    palette = matplotlib.colormaps["tab20"]
    colour = {label: palette(i % 20) for i, label in enumerate(sorted({c for row in cells for c in row}))}
    for r, row in enumerate(cells):
        for c, label in enumerate(row):
            y = top + r * CELL_PX
            ax.add_patch(matplotlib.patches.Rectangle((c * CELL_PX, y), CELL_PX, CELL_PX, facecolor=colour[label],
                                                      edgecolor="black", linewidth=1))
            ax.text(c * CELL_PX + CELL_PX / 2, y + CELL_PX / 2, label, ha="center", va="center", fontsize=8,
                    wrap=True)
    if title:
        # shrunk to the grid's width (a character is ~0.6 em wide; 72 points per inch)
        size = max(3.0, min(8.0, width * 72 / (DPI * 0.6 * len(title))))
        ax.text(width / 2, TITLE_PX / 2, title, ha="center", va="center", fontsize=size)
    fig.savefig(path, format="png", dpi=DPI)


def visualize(x, mesh=None, placements=None, name: str | None = None, path=None) -> str:
    """The picture of a jax.Array's sharding, or of `placements` on `mesh` for an array or shape
    (a tuple of ints) `x`. Returns the text (print it); with `path`, also writes it as a PNG."""
    if placements is None:
        sharding = getattr(x, "sharding", None)
        if sharding is None:
            raise DistError("visualize: give placements and a mesh, or an array with a sharding")
        slices = sharding.devices_indices_map(tuple(x.shape))
        desc = str(getattr(sharding, "spec", ""))
        shape = tuple(x.shape)
        return render_blocks(shape, {d.id: s for d, s in slices.items()},
                             f"{name + ' ' if name else ''}{list(shape)} {desc}".rstrip(), path)
    from ..ir.jax_import import spec_to_sharding
    from ..sharding import device_slices
    from .mesh import as_process_mesh
    from .placements import to_spec
    mesh = as_process_mesh(mesh)
    shape = tuple(x) if isinstance(x, tuple) else tuple(x.shape)
    spec = to_spec(placements, mesh, shape, name or "tensor")
    ts = spec_to_sharding("mesh", mesh.sharding_mesh, spec, len(shape))
    return render_blocks(shape, device_slices(ts, shape, {"mesh": mesh.sharding_mesh}),
                         f"{name + ' ' if name else ''}{list(shape)} {list(placements)}", path)
