"""Convolutions, roi_align and the generic (data-parallel / replicated) rules: samplers and
numpy reference kernels (conv_generic family).

The convolution kernels follow Paddle's attribute semantics: `paddings` of length nd (one per
spatial dim) or 2*nd (before/after pairs), `padding_algorithm` EXPLICIT / SAME (output = ceil(in
/ stride), dilation 1) / VALID (no padding), `groups` splitting input and output channels into
blocks, and channel-last layouts (NHWC, NDHWC). Every rank runs them on its shards with the
same attributes, so a rule that splits a spatial dim, or a grouped channel, is caught.
"""
from __future__ import annotations

from math import ceil

import numpy as np

from ..cases import Sample, TensorArg
from ..kernels import kernel
from ..placement import Placement
from ..samplers import _rank, random_dim, sampler, tensor

_CHANNEL_LAST = ("NHWC", "NDHWC")


# ---- convolution geometry ------------------------------------------------------------------
def _pairs(paddings, nd):
    p = [int(v) for v in paddings]
    if not p:
        return [(0, 0)] * nd
    if len(p) == nd:
        return [(v, v) for v in p]
    if len(p) == 2 * nd:
        return [(p[2 * i], p[2 * i + 1]) for i in range(nd)]
    raise ValueError(f"paddings {p} fit neither {nd} nor {2 * nd} spatial entries")


def _geometry(spatial, kernel_size, strides, paddings, padding_algorithm, dilations):
    """(pads as (before, after) per dim, strides, dilations) after Paddle's padding algorithm."""
    nd = len(spatial)
    s = [int(v) for v in strides] or [1] * nd
    d = [int(v) for v in dilations] or [1] * nd
    if len(s) != nd or len(d) != nd:
        raise ValueError(f"strides {s} / dilations {d} do not have {nd} entries")
    if padding_algorithm == "SAME":
        pads = []
        for n, k, st in zip(spatial, kernel_size, s):
            out = (n + st - 1) // st
            total = max((out - 1) * st + k - n, 0)
            pads.append((total // 2, total - total // 2))
        return pads, s, [1] * nd
    if padding_algorithm == "VALID":
        return [(0, 0)] * nd, s, d
    return _pairs(paddings, nd), s, d


def _to_cf(x):
    return np.moveaxis(x, -1, 1)


def _from_cf(x):
    return np.moveaxis(x, 1, -1)


def _window(k, s, d, out):
    """The input positions kernel offset k touches for outputs 0..out-1 (one spatial dim)."""
    return slice(k * d, k * d + (out - 1) * s + 1, s)


def _conv_cf(xp, w, s, d, groups):
    """Channel-first convolution of an already padded input: xp [N, C, *S], w [M, C/g, *K]."""
    n, c = xp.shape[:2]
    m, cg = w.shape[:2]
    ks = w.shape[2:]
    if groups < 1 or c != cg * groups or m % groups:
        raise ValueError(f"{c} input channels, filter {list(w.shape)} and groups={groups} do not fit")
    out = [(xp.shape[2 + i] - (d[i] * (ks[i] - 1) + 1)) // s[i] + 1 for i in range(len(ks))]
    if min(out, default=1) < 1:
        raise ValueError(f"the (padded) input {list(xp.shape)} is smaller than the dilated filter {list(ks)}")
    g, mg = groups, m // groups
    xr = xp.reshape((n, g, cg) + xp.shape[2:])
    wr = w.reshape((g, mg, cg) + tuple(ks))
    res = np.zeros((n, g, mg) + tuple(out))
    for k in np.ndindex(*ks):
        xs = xr[(slice(None),) * 3 + tuple(_window(k[i], s[i], d[i], out[i]) for i in range(len(ks)))]
        res += np.einsum("ngc...,gmc->ngm...", xs, wr[(slice(None),) * 3 + k])
    return res.reshape((n, m) + tuple(out))


def _conv_cf_adj_input(og, w, spatial, s, d, groups):
    """The adjoint of _conv_cf in its input: og [N, M, *O] -> [N, C, *spatial] (padded coords)."""
    n, m = og.shape[:2]
    mw, cg = w.shape[:2]
    ks = w.shape[2:]
    if groups < 1 or m != mw or m % groups:
        raise ValueError(f"{m} output-grad channels, filter {list(w.shape)} and groups={groups} do not fit")
    out = og.shape[2:]
    for i in range(len(ks)):
        if (out[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 > spatial[i]:
            raise ValueError(f"output grad {list(og.shape)} does not fit an input of spatial size {list(spatial)}")
    g, mg = groups, m // groups
    ogr = og.reshape((n, g, mg) + tuple(out))
    wr = w.reshape((g, mg, cg) + tuple(ks))
    res = np.zeros((n, g, cg) + tuple(spatial))
    for k in np.ndindex(*ks):
        idx = (slice(None),) * 3 + tuple(_window(k[i], s[i], d[i], out[i]) for i in range(len(ks)))
        res[idx] += np.einsum("ngm...,gmc->ngc...", ogr, wr[(slice(None),) * 3 + k])
    return res.reshape((n, g * cg) + tuple(spatial))


def _conv_cf_adj_filter(og, xp, ks, s, d, groups):
    """The adjoint of _conv_cf in its filter: og [N, M, *O], xp [N, C, *S] -> [M, C/g, *ks]."""
    n, m = og.shape[:2]
    c = xp.shape[1]
    if groups < 1 or c % groups or m % groups or xp.shape[0] != n:
        raise ValueError(f"input {list(xp.shape)}, output grad {list(og.shape)} and groups={groups} do not fit")
    out = og.shape[2:]
    g, mg, cg = groups, m // groups, c // groups
    ogr = og.reshape((n, g, mg) + tuple(out))
    xr = xp.reshape((n, g, cg) + xp.shape[2:])
    res = np.zeros((g, mg, cg) + tuple(ks))
    for k in np.ndindex(*ks):
        xs = xr[(slice(None),) * 3 + tuple(_window(k[i], s[i], d[i], out[i]) for i in range(len(ks)))]
        if xs.shape[3:] != tuple(out):
            raise ValueError(f"output grad {list(og.shape)} does not fit the input {list(xp.shape)}")
        flat = int(np.prod(out, dtype=np.int64))
        res[(slice(None),) * 3 + k] = np.einsum("ngmp,ngcp->gmc", ogr.reshape(ogr.shape[:3] + (flat,)),
                                                xs.reshape(xs.shape[:3] + (flat,)))
    return res.reshape((m, cg) + tuple(ks))


def _layout(x, data_format):
    return _to_cf(x) if data_format in _CHANNEL_LAST else x


def _unlayout(x, data_format):
    return _from_cf(x) if data_format in _CHANNEL_LAST else x


def _padded(xc, pads):
    return np.pad(xc, [(0, 0), (0, 0)] + [tuple(p) for p in pads])


# ---- convolution kernels -------------------------------------------------------------------
@kernel
def conv2d_valid(x, w):
    """NCHW convolution, stride 1, no padding, no dilation (conv2d's rule takes no attributes)."""
    return _conv_cf(x, w, [1, 1], [1, 1], 1)


@kernel
def conv_nd(x, w, strides, paddings, padding_algorithm, groups, dilations, data_format):
    """conv2d / conv3d / depthwise_conv2d with Paddle's attributes."""
    xc = _layout(x, data_format)
    pads, s, d = _geometry(xc.shape[2:], w.shape[2:], strides, paddings, padding_algorithm, dilations)
    return _unlayout(_conv_cf(_padded(xc, pads), w, s, d, int(groups)), data_format)


@kernel
def conv_nd_grad(x, w, out_grad, strides, paddings, padding_algorithm, groups, dilations, data_format):
    """(input_grad, filter_grad) of conv_nd."""
    xc, og = _layout(x, data_format), _layout(out_grad, data_format)
    pads, s, d = _geometry(xc.shape[2:], w.shape[2:], strides, paddings, padding_algorithm, dilations)
    xp = _padded(xc, pads)
    want = [(xp.shape[2 + i] - (d[i] * (w.shape[2 + i] - 1) + 1)) // s[i] + 1 for i in range(w.ndim - 2)]
    if list(og.shape[2:]) != want or og.shape[0] != xc.shape[0]:
        raise ValueError(f"output grad {list(og.shape)} is not the shape of the output ({want} spatial)")
    gxp = _conv_cf_adj_input(og, w, xp.shape[2:], s, d, int(groups))
    gx = gxp[(slice(None), slice(None)) + tuple(slice(b, b + n) for (b, _), n in zip(pads, xc.shape[2:]))]
    gw = _conv_cf_adj_filter(og, xp, w.shape[2:], s, d, int(groups))
    return _unlayout(gx, data_format), gw


def _transpose_geometry(xc, w, strides, paddings, output_padding, output_size, padding_algorithm, dilations):
    """(pads, strides, dilations, full size F, output size L) per spatial dim of conv2d_transpose."""
    spatial, ks = xc.shape[2:], w.shape[2:]
    pads, s, d = _geometry(spatial, ks, strides, paddings, padding_algorithm, dilations)
    nd = len(spatial)
    full = [(spatial[i] - 1) * s[i] + d[i] * (ks[i] - 1) + 1 for i in range(nd)]
    if len(output_size):
        if len(output_size) != nd:
            raise ValueError(f"output_size {list(output_size)} does not have {nd} entries")
        size = [int(v) for v in output_size]
    else:
        extra = [int(v) for v in output_padding] or [0] * nd
        if len(extra) != nd:
            raise ValueError(f"output_padding {extra} does not have {nd} entries")
        size = [full[i] - pads[i][0] - pads[i][1] + extra[i] for i in range(nd)]
    if min(size, default=1) < 1:
        raise ValueError(f"conv2d_transpose output size {size} is empty")
    return pads, s, d, full, size


@kernel
def conv_transpose_nd(x, w, strides, paddings, output_padding, output_size, padding_algorithm, groups, dilations,
                      data_format):
    """conv2d_transpose: the adjoint of a convolution with filter w [C, M/g, *K] (out[j] sums
    every x[i] * w[k] with i * stride + k * dilation - pad_before == j)."""
    xc = _layout(x, data_format)
    pads, s, d, full, size = _transpose_geometry(xc, w, strides, paddings, output_padding, output_size,
                                                 padding_algorithm, dilations)
    f = _conv_cf_adj_input(xc, w, full, s, d, int(groups))
    out = np.zeros(f.shape[:2] + tuple(size))
    src = tuple(slice(b, min(b + n, fn)) for (b, _), n, fn in zip(pads, size, full))
    dst = tuple(slice(0, sl.stop - sl.start) for sl in src)
    out[(slice(None), slice(None)) + dst] = f[(slice(None), slice(None)) + src]
    return _unlayout(out, data_format)


@kernel
def conv_transpose_nd_grad(x, w, out_grad, strides, paddings, output_padding, output_size, padding_algorithm,
                           groups, dilations, data_format):
    """(input_grad, filter_grad) of conv_transpose_nd."""
    xc, og = _layout(x, data_format), _layout(out_grad, data_format)
    pads, s, d, full, size = _transpose_geometry(xc, w, strides, paddings, output_padding, output_size,
                                                 padding_algorithm, dilations)
    if list(og.shape[2:]) != size or og.shape[0] != xc.shape[0]:
        raise ValueError(f"output grad {list(og.shape)} is not the shape of the output ({size} spatial)")
    og_full = np.zeros(og.shape[:2] + tuple(full))
    src = tuple(slice(0, max(min(n, fn - b), 0)) for (b, _), n, fn in zip(pads, size, full))
    dst = tuple(slice(b, b + sl.stop) for (b, _), sl in zip(pads, src))
    og_full[(slice(None), slice(None)) + dst] = og[(slice(None), slice(None)) + src]
    gx = _conv_cf(og_full, w, s, d, int(groups))
    gw = _conv_cf_adj_filter(xc, og_full, w.shape[2:], s, d, int(groups))
    return _unlayout(gx, data_format), gw


# ---- roi_align -----------------------------------------------------------------------------
def _roi_taps(boxes, boxes_num, n_images, height, width, pooled_height, pooled_width, spatial_scale,
              sampling_ratio, aligned):
    """For each (box, bin_y, bin_x): the (image, y, x, weight) taps that roi_align averages."""
    boxes = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    if boxes_num is None:
        image = np.zeros(len(boxes), dtype=np.int64)
    else:
        ends = np.cumsum(np.asarray(boxes_num, dtype=np.int64))
        image = np.minimum(np.searchsorted(ends, np.arange(len(boxes)), side="right"), max(n_images - 1, 0))
    offset = 0.5 if aligned else 0.0
    taps = []
    for k, (x1, y1, x2, y2) in enumerate(boxes):
        xs, ys = x1 * spatial_scale - offset, y1 * spatial_scale - offset
        rw, rh = x2 * spatial_scale - offset - xs, y2 * spatial_scale - offset - ys
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / pooled_height, rw / pooled_width
        gh = sampling_ratio if sampling_ratio > 0 else int(ceil(rh / pooled_height))
        gw = sampling_ratio if sampling_ratio > 0 else int(ceil(rw / pooled_width))
        count = max(gh * gw, 1)
        for i in range(pooled_height):
            for j in range(pooled_width):
                cell = []
                for iy in range(max(gh, 0)):
                    y = ys + i * bh + (iy + 0.5) * bh / gh
                    for ix in range(max(gw, 0)):
                        xx = xs + j * bw + (ix + 0.5) * bw / gw
                        cell += [(int(image[k]), yy, xq, wt / count)
                                 for yy, xq, wt in _bilinear(y, xx, height, width)]
                taps.append((k, i, j, cell))
    return taps


def _bilinear(y, x, height, width):
    if y < -1.0 or y > height or x < -1.0 or x > width or height == 0 or width == 0:
        return []
    y, x = max(y, 0.0), max(x, 0.0)
    yl, xl = int(y), int(x)
    if yl >= height - 1:
        yl = yh = height - 1
        y = float(yl)
    else:
        yh = yl + 1
    if xl >= width - 1:
        xl = xh = width - 1
        x = float(xl)
    else:
        xh = xl + 1
    ly, lx = y - yl, x - xl
    hy, hx = 1.0 - ly, 1.0 - lx
    return [(yl, xl, hy * hx), (yl, xh, hy * lx), (yh, xl, ly * hx), (yh, xh, ly * lx)]


@kernel
def roi_align_bilinear(x, boxes, boxes_num, pooled_height, pooled_width, spatial_scale, sampling_ratio, aligned):
    """out [K, C, pooled_height, pooled_width]: bilinear samples of x averaged over each bin."""
    n, c, h, w = x.shape
    out = np.zeros((len(boxes), c, pooled_height, pooled_width))
    for k, i, j, cell in _roi_taps(boxes, boxes_num, n, h, w, pooled_height, pooled_width, spatial_scale,
                                   sampling_ratio, aligned):
        for b, yy, xx, wt in cell:
            out[k, :, i, j] += wt * x[b, :, yy, xx]
    return out


@kernel
def roi_align_bilinear_grad(x, boxes, boxes_num, out_grad, pooled_height, pooled_width, spatial_scale, sampling_ratio,
                   aligned):
    """x_grad: out_grad scattered back through the bilinear taps."""
    n, c, h, w = x.shape
    if out_grad.shape != (len(boxes), c, pooled_height, pooled_width):
        raise ValueError(f"out_grad {list(out_grad.shape)} is not [boxes, {c}, {pooled_height}, {pooled_width}]")
    g = np.zeros(x.shape)
    for k, i, j, cell in _roi_taps(boxes, boxes_num, n, h, w, pooled_height, pooled_width, spatial_scale,
                                   sampling_ratio, aligned):
        for b, yy, xx, wt in cell:
            g[b, :, yy, xx] += wt * out_grad[k, :, i, j]
    return g


# ---- samplers ------------------------------------------------------------------------------
def _whole(t: TensorArg, dims) -> TensorArg:
    """t with the given dims unsplit (its partial mesh dims kept)."""
    d = [() if k in dims else m for k, m in enumerate(t.placement.dims)]
    return t.with_placement(Placement(tuple(d), t.placement.partial))


def _spatial_whole_often(rng, tensors, spatial):
    """Most draws keep the spatial and kernel dims unsplit, so the batch, channel and group
    logic meets Paddle's often; the rest split them at random like any dim."""
    if rng.random() < 0.4:
        return tensors
    return [t if t is None else _whole(t, s) for t, s in zip(tensors, spatial)]


@sampler
def conv2d(rng, mesh, opts):
    n, c, o = (random_dim(rng, mesh) for _ in range(3))
    h, w = int(rng.integers(3, 9)), int(rng.integers(3, 9))
    kh, kw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    ins = [tensor(rng, (n, c, h, w), mesh, opts), tensor(rng, (o, c, kh, kw), mesh, opts)]
    return Sample(_spatial_whole_often(rng, ins, [(2, 3), (2, 3)]))


def _conv_attrs(rng, nd, channel_last):
    algo = str(rng.choice(["EXPLICIT", "EXPLICIT", "EXPLICIT", "SAME", "VALID"]))
    n_pad = nd if rng.random() < 0.5 else 2 * nd
    return {
        "strides": [int(rng.integers(1, 3)) for _ in range(nd)],
        "paddings": [int(rng.integers(0, 3)) for _ in range(n_pad)],
        "padding_algorithm": algo,
        "dilations": [int(rng.integers(1, 3)) for _ in range(nd)],
        "data_format": channel_last if rng.random() < 0.3 else ("NCHW" if nd == 2 else "NCDHW"),
    }


def _channels(rng, mesh, depthwise=False):
    """(groups, input channels, filter dim 0, filter dim 1) of a convolution."""
    if depthwise:
        c = random_dim(rng, mesh)
        return c, c, c * int(rng.integers(1, 3)), 1
    g = 1 if rng.random() < 0.6 else int(rng.choice([2, 3]))
    cg, mg = random_dim(rng, mesh), random_dim(rng, mesh)
    return g, g * cg, g * mg, cg


def _image(n, c, spatial, channel_last):
    return (n,) + tuple(spatial) + (c,) if channel_last else (n, c) + tuple(spatial)


def _conv_sample(rng, mesh, opts, nd, depthwise=False, grad=False):
    channel_last = "NHWC" if nd == 2 else "NDHWC"
    for _ in range(50):
        attrs = _conv_attrs(rng, nd, channel_last)
        groups, c, m, cg = _channels(rng, mesh, depthwise)
        attrs["groups"] = groups
        ks = [int(rng.integers(1, 4)) for _ in range(nd)]
        spatial = [int(rng.integers(1, 8 if nd == 2 else 6)) for _ in range(nd)]
        n = random_dim(rng, mesh)
        cl = attrs["data_format"] in _CHANNEL_LAST
        xs, ws = _image(n, c, spatial, cl), (m, cg) + tuple(ks)
        try:
            out = conv_nd(np.ones(xs), np.ones(ws), attrs["strides"], attrs["paddings"],
                          attrs["padding_algorithm"], groups, attrs["dilations"], attrs["data_format"])
        except ValueError:
            continue
        if out.size and not out.any():
            continue  # every window lies in the padding: a zero output proves nothing
        ins = [tensor(rng, xs, mesh, opts), tensor(rng, ws, mesh, opts)]
        if grad:
            ins.append(tensor(rng, out.shape, mesh, opts))
        image = tuple(range(1, nd + 1)) if cl else tuple(range(2, nd + 2))
        return Sample(_spatial_whole_often(rng, ins, [image, tuple(range(2, nd + 2)), image]), attrs)
    raise RuntimeError("no valid convolution drawn")


@sampler
def conv3d(rng, mesh, opts):
    return _conv_sample(rng, mesh, opts, 3)


@sampler
def conv3d_grad(rng, mesh, opts):
    return _conv_sample(rng, mesh, opts, 3, grad=True)


@sampler
def depthwise_conv2d(rng, mesh, opts):
    return _conv_sample(rng, mesh, opts, 2, depthwise=True)


@sampler
def depthwise_conv2d_grad(rng, mesh, opts):
    return _conv_sample(rng, mesh, opts, 2, depthwise=True, grad=True)


def _conv_transpose_sample(rng, mesh, opts, grad=False):
    for _ in range(50):
        attrs = _conv_attrs(rng, 2, "NHWC")
        groups, c, m, cg = _channels(rng, mesh)  # filter [C, M/g, kh, kw]: m is C here, cg is M/g
        c, mg = m, cg
        attrs["groups"] = groups
        ks = [int(rng.integers(1, 4)) for _ in range(2)]
        spatial = [int(rng.integers(1, 6)) for _ in range(2)]
        n = random_dim(rng, mesh)
        cl = attrs["data_format"] in _CHANNEL_LAST
        xs, ws = _image(n, c, spatial, cl), (c, mg) + tuple(ks)
        attrs["output_padding"], attrs["output_size"] = [], []
        r = rng.random()
        if r < 0.25:  # extra rows at the end of each spatial dim (fewer than the stride, as Paddle wants)
            attrs["output_padding"] = [int(rng.integers(0, s)) for s in attrs["strides"]]
        try:
            out = conv_transpose_nd(np.ones(xs), np.ones(ws), attrs["strides"], attrs["paddings"],
                                    attrs["output_padding"], [], attrs["padding_algorithm"], groups,
                                    attrs["dilations"], attrs["data_format"])
        except ValueError:
            continue
        if out.size and not out.any():
            continue  # the padding crops every contribution: a zero output proves nothing
        if r > 0.75:  # the output size named: anything up to stride - 1 past the smallest
            sp = out.shape[1:3] if cl else out.shape[2:]
            attrs["output_size"] = [int(v + rng.integers(0, s)) for v, s in zip(sp, attrs["strides"])]
            out = conv_transpose_nd(np.zeros(xs), np.zeros(ws), attrs["strides"], attrs["paddings"], [],
                                    attrs["output_size"], attrs["padding_algorithm"], groups, attrs["dilations"],
                                    attrs["data_format"])
        ins = [tensor(rng, xs, mesh, opts), tensor(rng, ws, mesh, opts)]
        if grad:
            ins.append(tensor(rng, out.shape, mesh, opts))
        image = (1, 2) if cl else (2, 3)
        return Sample(_spatial_whole_often(rng, ins, [image, (2, 3), image]), attrs)
    raise RuntimeError("no valid transposed convolution drawn")


@sampler
def conv2d_transpose(rng, mesh, opts):
    return _conv_transpose_sample(rng, mesh, opts)


@sampler
def conv2d_transpose_grad(rng, mesh, opts):
    return _conv_transpose_sample(rng, mesh, opts, grad=True)


def _roi_sample(rng, mesh, opts, grad=False):
    n, c = random_dim(rng, mesh), random_dim(rng, mesh)
    h, w = int(rng.integers(2, 8)), int(rng.integers(2, 8))
    k = random_dim(rng, mesh)
    attrs = {"pooled_height": int(rng.integers(1, 4)), "pooled_width": int(rng.integers(1, 4)),
             "spatial_scale": float(rng.choice([0.5, 1.0, 2.0])), "sampling_ratio": int(rng.choice([-1, 1, 2])),
             "aligned": bool(rng.integers(2))}
    x = tensor(rng, (n, c, h, w), mesh, opts)
    boxes = tensor(rng, (k, 4), mesh, opts)
    boxes_num = tensor(rng, (n,), mesh, opts, int_high=k + 1) if rng.random() < 0.8 else None
    ins = [x, boxes, boxes_num]
    if grad:
        ins.append(tensor(rng, (k, c, attrs["pooled_height"], attrs["pooled_width"]), mesh, opts))
    return Sample(ins, attrs)


@sampler
def roi_align(rng, mesh, opts):
    return _roi_sample(rng, mesh, opts)


@sampler
def roi_align_grad(rng, mesh, opts):
    return _roi_sample(rng, mesh, opts, grad=True)



# ---- generic rules (default_data_parallel, replicated) ----------------------------------------
def _rows(x):
    return x.reshape(x.shape[0], int(np.prod(x.shape[1:], dtype=np.int64)))


@kernel
def batch_rows(ins):
    """A generic batch-parallel op: row b of every output mixes row b of every input (each input
    reversed along its other dims, scaled by the sum of all inputs' row b), and a last output
    holds those row sums. Rows are independent; within a row every element matters."""
    s = sum(_rows(x).sum(axis=1) for x in ins)
    outs = [np.flip(x, axis=tuple(range(1, x.ndim))) * (1.0 + s).reshape((-1,) + (1,) * (x.ndim - 1)) for x in ins]
    return tuple(outs) + (s,)


@kernel
def whole(ins):
    """A generic op that needs every tensor whole: each input reversed along all its dims and
    scaled by the sum of everything, and a last output [that sum, the input count]."""
    t = float(sum(x.sum() for x in ins))
    return tuple(np.flip(x) * (1.0 + t) for x in ins) + (np.array([t, float(len(ins))]),)


@sampler
def default_data_parallel(rng, mesh, opts):
    b = random_dim(rng, mesh)
    n = int(rng.integers(1, 4))
    return Sample([[tensor(rng, (b,) + tuple(random_dim(rng, mesh) for _ in range(int(rng.integers(0, 3)))), mesh, opts)
                    for _ in range(n)]])


@sampler
def replicated(rng, mesh, opts):
    n = int(rng.integers(1, 4))
    return Sample([[tensor(rng, tuple(random_dim(rng, mesh) for _ in range(int(rng.integers(1, 4)))), mesh, opts)
                    for _ in range(n)]])


__all__ = ["Placement", "TensorArg", "_rank"]
