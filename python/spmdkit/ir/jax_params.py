"""A jaxpr equation's params <-> printable IR attributes, losslessly, for `jax.<primitive>` ops.

The importer turns params into attributes the rule registry reads (StableHLO's names in snake
case: dot_general's `dimension_numbers` becomes `lhs_contracting_dimensions`, ...; see
docs/jax_stablehlo_rules.md) and keeps every other param as a plain attribute (bool, int, float,
str, lists), so nothing is lost: `params_from_attrs` rebuilds the exact params and the
interpreter binds the primitive with them. Encodings:
- tuples -> lists (rebuilt as tuples), numpy scalars -> Python numbers;
- dtypes (params named in DTYPE_PARAMS) -> numpy names ("float32");
- enums (mode, precision, rounding_method, fft_type) -> member names, an IntEnum's (rounding_method,
  fft_type) -> its number;
- dimension-number tuples -> one list attribute per field (scatter's `operand_batching_dims`
  is `input_batching_dims`, as StableHLO names it); pad's `padding_config` -> flat (lo, hi, in)*;
  conv_general_dilated's `padding` pairs -> flat (lo, hi)* (what the rule reads);
- shardings (NamedSharding params: broadcast_in_dim's `sharding`, a reduction's `out_sharding`,
  ... put there by JAX for arrays laid out on an explicit mesh) -> `#sdy.sharding` attributes on
  the program's mesh of the same axes, their names listed in `jax.sharding_params`. They say how
  JAX laid the result out, not what it is: rebuilt as None, so that the value is computed alike
  globally (ir.evaluate) and on local blocks inside a shard_map (partition.execute);
- params that are None -> omitted, their names listed in the attribute `jax.none_params`;
- sets -> sorted lists, their names listed in `jax.set_params`;
- a scatter's `update_jaxpr` -> omitted: the primitive name fixes it (rebuilt from the dtype);
- select_and_scatter_add's `select_prim` (a primitive) -> its name.
Params that are jaxprs are the importer's business (regions, functions), never attributes.
`jax._src` is private: every use of it is in spmdkit.jax_compat.
"""
from __future__ import annotations

import enum
from functools import lru_cache
from typing import Any, Mapping

import numpy as np

from .errors import AttributeConversionError

NONE_PARAMS = "jax.none_params"
SET_PARAMS = "jax.set_params"  # names of params that are sets (kept as sorted lists)
SHARDING_PARAMS = "jax.sharding_params"  # names of params that were NamedShardings (kept as TensorShardings)

DTYPE_PARAMS = frozenset({"new_dtype", "dtype", "preferred_element_type", "index_dtype", "out_dtype",
                          "accumulation_type", "input_dtype", "output_dtype"})

# params whose value is an object the IR represents otherwise (regions, functions, meshes)
STRUCTURAL_PARAMS = frozenset({"jaxpr", "call_jaxpr", "jvp", "jvp_jaxpr_fun", "jvp_jaxpr_thunk", "fwd_jaxpr_thunk",
                               "bwd", "out_trees", "branches", "cond_jaxpr", "body_jaxpr"})

_SCATTERS = {"scatter-add": "add", "scatter_add": "add", "scatter-mul": "mul", "scatter_mul": "mul",
             "scatter-min": "min", "scatter_min": "min", "scatter-max": "max", "scatter_max": "max",
             "scatter-sub": "sub", "scatter_sub": "sub", "scatter": None}


class ParamError(AttributeConversionError):
    """A param the IR cannot hold as an attribute, or an attribute that cannot become a param."""


@lru_cache(maxsize=1)
def _dimension_number_classes():  # read only (shared): made once, an importer asks per op
    from ..jax_compat import convolution, slicing
    return {"gather": (slicing.GatherDimensionNumbers, {}),
            **{s: (slicing.ScatterDimensionNumbers, {"operand_batching_dims": "input_batching_dims"})
               for s in _SCATTERS},
            "conv_general_dilated": (convolution.ConvDimensionNumbers, {})}


@lru_cache(maxsize=1)
def _enum_classes():  # read only (shared)
    from ..jax_compat import lax, slicing
    return {"mode": slicing.GatherScatterMode, "precision": lax.Precision, "rounding_method": lax.RoundingMethod,
            "fft_type": lax.FftType}


# -- params -> attributes -----------------------------------------------------------------
def encode_value(value, where: str):
    """One param value as a printable attribute (recursively for tuples)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, (tuple, list)):
        return [encode_value(v, where) for v in value]
    raise ParamError(f"{where}: cannot keep a param of type {type(value).__name__} ({value!r:.80}) as an attribute")


def _dot_attrs(dimension_numbers, where: str) -> dict:
    """dot_general's ((lhs, rhs) contracting, (lhs, rhs) batching) dims as the rule's attributes."""
    (lc, rc), (lb, rb) = dimension_numbers
    return {"lhs_contracting_dimensions": encode_value(lc, where), "rhs_contracting_dimensions": encode_value(rc, where),
            "lhs_batching_dimensions": encode_value(lb, where), "rhs_batching_dimensions": encode_value(rb, where)}


def attrs_from_params(prim: str, params: Mapping[str, Any], sharding_attr=None) -> dict[str, Any]:
    """The attributes of a `jax.<prim>` op (structural params left out; the caller handles them).
    `sharding_attr(named_sharding, where)` turns a NamedSharding param into an attribute (the
    importer's, which knows the program's meshes); without it such a param is refused."""
    attrs: dict[str, Any] = {}
    nones: list[str] = []
    sets: list[str] = []
    shardings: list[str] = []
    dnums = _dimension_number_classes()
    for key, value in params.items():
        where = f"jax.{prim}: param {key!r}"
        if key in STRUCTURAL_PARAMS:
            continue
        if prim in _SCATTERS and key in ("update_jaxpr", "update_consts"):
            if key == "update_consts" and tuple(value):
                raise ParamError(f"{where}: a scatter with update constants is not supported")
            continue
        if value is None or (key == "sharding" and _unconstrained(value)):
            nones.append(key)   # a sharding on a mesh without axes says nothing (convert's transpose sets one)
        elif key in DTYPE_PARAMS:
            attrs[key] = np.dtype(value).name
        elif key == "dimension_numbers" and prim == "dot_general":
            attrs.update(_dot_attrs(value, where))
        elif key == "ragged_dot_dimension_numbers":
            attrs.update(_dot_attrs(value.dot_dimension_numbers, where),
                         lhs_ragged_dimensions=encode_value(value.lhs_ragged_dimensions, where),
                         rhs_group_dimensions=encode_value(value.rhs_group_dimensions, where))
        elif key == "dimension_numbers" and prim in dnums:
            cls, renames = dnums[prim]
            for field in cls._fields:
                attrs[renames.get(field, field)] = encode_value(getattr(value, field), where)
        elif key == "padding_config" and prim == "pad":
            attrs[key] = [int(x) for triple in value for x in triple]
        elif key == "padding" and prim == "conv_general_dilated" and not isinstance(value, str):
            attrs[key] = [int(x) for pair in value for x in pair]
        elif sharding_attr is not None and _is_named_sharding(value):
            attrs[key] = sharding_attr(value, where)
            shardings.append(key)
        elif key == "select_prim":  # select_and_scatter_add's choice, a primitive (ge / le): its name
            attrs[key] = value.name
        elif isinstance(value, (frozenset, set)):
            attrs[key] = sorted((encode_value(v, where) for v in value), key=repr)
            sets.append(key)
        else:
            attrs[key] = encode_value(value, where)
    if nones:
        attrs[NONE_PARAMS] = sorted(nones)
    if sets:
        attrs[SET_PARAMS] = sorted(sets)
    if shardings:
        attrs[SHARDING_PARAMS] = sorted(shardings)
    return attrs


def _is_named_sharding(value) -> bool:
    from jax.sharding import NamedSharding
    return isinstance(value, NamedSharding)


def _unconstrained(sharding) -> bool:
    mesh = getattr(sharding, "mesh", None)
    return mesh is not None and not tuple(getattr(mesh, "axis_names", ("?",)))


# -- attributes -> params -----------------------------------------------------------------


def _as_param(value):
    if isinstance(value, list):
        return tuple(_as_param(v) for v in value)
    return value


def params_from_attrs(prim: str, attrs: Mapping[str, Any], operand_dtypes=()) -> dict[str, Any]:
    """The exact params to bind `prim` with, rebuilt from the attributes `attrs_from_params` made."""
    import jax.numpy as jnp

    attrs = dict(attrs)
    params: dict[str, Any] = {k: None for k in attrs.pop(NONE_PARAMS, [])}
    sets = set(attrs.pop(SET_PARAMS, []))
    for key in attrs.pop(SHARDING_PARAMS, []):  # a layout hint, not part of the value (module doc)
        attrs.pop(key, None)
        params[key] = None
    enums = _enum_classes()
    dnums = _dimension_number_classes()
    if prim in ("dot_general", "ragged_dot_general"):
        try:
            dims = ((tuple(attrs.pop("lhs_contracting_dimensions")), tuple(attrs.pop("rhs_contracting_dimensions"))),
                    (tuple(attrs.pop("lhs_batching_dimensions", [])), tuple(attrs.pop("rhs_batching_dimensions", []))))
            if prim == "dot_general":
                params["dimension_numbers"] = dims
            else:
                from jax.lax import RaggedDotDimensionNumbers
                params["ragged_dot_dimension_numbers"] = RaggedDotDimensionNumbers(
                    dot_dimension_numbers=dims, lhs_ragged_dimensions=tuple(attrs.pop("lhs_ragged_dimensions")),
                    rhs_group_dimensions=tuple(attrs.pop("rhs_group_dimensions", [])))
        except KeyError as e:
            raise ParamError(f"jax.{prim}: attribute {e.args[0]!r} is missing") from None
    elif prim in dnums:
        cls, renames = dnums[prim]
        fields = {}
        for field in cls._fields:
            name = renames.get(field, field)
            if name not in attrs:
                raise ParamError(f"jax.{prim}: attribute {name!r} is missing")
            fields[field] = _as_param(attrs.pop(name))
        params["dimension_numbers"] = cls(**fields)
    if prim == "pad" and "padding_config" in attrs:
        flat = attrs.pop("padding_config")
        if len(flat) % 3:
            raise ParamError(f"jax.pad: padding_config has {len(flat)} entries, not a multiple of 3")
        params["padding_config"] = tuple(tuple(flat[i:i + 3]) for i in range(0, len(flat), 3))
    if prim == "conv_general_dilated" and isinstance(attrs.get("padding"), list):
        flat = attrs.pop("padding")
        if len(flat) % 2:
            raise ParamError(f"jax.conv_general_dilated: padding has {len(flat)} entries, not (lo, hi) pairs")
        params["padding"] = tuple((int(flat[i]), int(flat[i + 1])) for i in range(0, len(flat), 2))
    if prim in _SCATTERS:
        params["update_consts"] = ()
        params["update_jaxpr"] = _scatter_update_jaxpr(_SCATTERS[prim], operand_dtypes)
    for key, value in attrs.items():
        if key in DTYPE_PARAMS:
            params[key] = jnp.dtype(value)
        elif key == "select_prim":
            params[key] = primitive(value)
        elif key in enums and value is not None:
            cls = enums[key]
            member = lambda v: cls(v) if isinstance(v, int) else cls[v]  # an IntEnum is kept as its number
            try:
                params[key] = tuple(member(v) for v in value) if isinstance(value, list) else member(value)
            except (KeyError, ValueError):
                raise ParamError(f"jax.{prim}: {key}={value!r} is not a {cls.__name__}") from None
        elif key in sets:
            params[key] = frozenset(value)
        else:
            params[key] = _as_param(value)
    return params


def _scatter_update_jaxpr(kind, operand_dtypes):
    if kind is None:
        return None
    import jax
    from jax import lax

    if not operand_dtypes:
        raise ParamError("a scatter's update computation needs the operand's dtype")
    fn = {"add": lax.add, "mul": lax.mul, "min": lax.min, "max": lax.max, "sub": lax.sub}[kind]
    scalar = jax.ShapeDtypeStruct((), operand_dtypes[0])
    return jax.make_jaxpr(fn)(scalar, scalar).jaxpr


# -- primitives by name ---------------------------------------------------------------------
_PRIMITIVES: dict[str, Any] = {}


def remember_primitive(prim) -> None:
    """Record a primitive met while importing, so that `primitive(name)` finds it later."""
    _PRIMITIVES.setdefault(prim.name, prim)


def primitive(name: str):
    """The JAX primitive called `name` (a jaxpr's name: `dot_general`, `scatter-add`, ...)."""
    if name not in _PRIMITIVES:
        _scan_primitives()
    try:
        return _PRIMITIVES[name]
    except KeyError:
        raise ParamError(f"unknown JAX primitive {name!r}") from None


def _scan_primitives() -> None:
    from jax.extend.core import Primitive

    from ..jax_compat import primitive_modules
    for mod in primitive_modules():
        for value in vars(mod).values():
            if isinstance(value, Primitive):
                _PRIMITIVES.setdefault(value.name, value)


def jax_mesh_axes(mesh) -> tuple[list[tuple[str, int]], list[int] | None]:
    """(axes, device ids) of a jax Mesh or AbstractMesh; ids None when it has no devices."""
    axes = [(str(n), int(s)) for n, s in zip(mesh.axis_names, mesh.axis_sizes)]
    try:
        devices = mesh.devices
    except (AttributeError, ValueError):  # an AbstractMesh has no devices
        devices = None
    ids = None if devices is None else [int(d.id) for d in np.asarray(devices).flat]
    return axes, ids
