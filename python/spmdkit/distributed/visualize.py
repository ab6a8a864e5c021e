"""A terminal picture of which devices hold which block of a 1-D or 2-D array (plain text, like
jax.debug.visualize_array_sharding): one cell per distinct block, labelled with the ids of the
devices that hold it; a 1-D array is drawn as one row."""
from __future__ import annotations

from .errors import DistError


def _bounds(sl: slice, n: int) -> tuple[int, int]:
    start, stop, _ = sl.indices(n)
    return start, stop


def render_blocks(shape, device_slices: dict, title: str | None = None) -> str:
    """The grid of `device_slices` (device id -> tuple of slices of the global array)."""
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
    return "\n".join(out)


def visualize(x, mesh=None, placements=None, name: str | None = None) -> str:
    """The picture of a jax.Array's sharding, or of `placements` on `mesh` for an array or shape
    (a tuple of ints) `x`. Returns the text (print it)."""
    if placements is None:
        sharding = getattr(x, "sharding", None)
        if sharding is None:
            raise DistError("visualize: give placements and a mesh, or an array with a sharding")
        slices = sharding.devices_indices_map(tuple(x.shape))
        desc = str(getattr(sharding, "spec", ""))
        shape = tuple(x.shape)
        return render_blocks(shape, {d.id: s for d, s in slices.items()},
                             f"{name + ' ' if name else ''}{list(shape)} {desc}".rstrip())
    from ..ir.jax_import import spec_to_sharding
    from ..sharding import device_slices
    from .mesh import as_process_mesh
    from .placements import to_spec
    mesh = as_process_mesh(mesh)
    shape = tuple(x) if isinstance(x, tuple) else tuple(x.shape)
    spec = to_spec(placements, mesh, shape, name or "tensor")
    ts = spec_to_sharding("mesh", mesh.sharding_mesh, spec, len(shape))
    return render_blocks(shape, device_slices(ts, shape, {"mesh": mesh.sharding_mesh}),
                         f"{name + ' ' if name else ''}{list(shape)} {list(placements)}")
