"""spmdkit.jax_compat: the one module that uses JAX's private API. No other module of the package
names `jax._src`; the version check accepts the supported range and warns outside it; each
private entry point works on this JAX."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import jax
import pytest
from spmdkit import jax_compat

PACKAGE = Path(jax_compat.__file__).parent


def test_no_other_module_uses_private_jax():
    private = re.compile(r"from jax\._src|import jax\._src|[\"']jax\._src")   # an import, or a module name
    users = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
                   if p.name != "jax_compat.py" and private.search(p.read_text()))
    assert users == []


@pytest.mark.parametrize("text, parsed", [("0.10.2", (0, 10, 2)), ("0.11.2", (0, 11, 2)), ("0.12", (0, 12, 0)),
                                          ("0.10.2.dev20260101", (0, 10, 2)), ("1.0.0rc1", (1, 0, 0))])
def test_parse_version(text, parsed):
    assert jax_compat.parse_version(text) == parsed


def test_version_check():
    assert jax_compat.JAX_VERSION == jax_compat.parse_version(jax.__version__)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for ok in ((0, 10, 2), (0, 11, 0), (0, 11, 9)):
            assert jax_compat.check_version(ok)
    for old_or_new in ((0, 10, 1), (0, 12, 0), (1, 0, 0)):
        with pytest.warns(RuntimeWarning, match=r"jax >= 0\.10\.2, < 0\.12\.0"):
            assert not jax_compat.check_version(old_or_new)
    with pytest.raises(ValueError):
        jax_compat.parse_version("latest")


def test_private_entry_points_work_here():
    ctx = jax_compat.make_ir_context()
    assert ctx.dialects["stablehlo"] is not None and ctx.dialects["sdy"] is not None
    modules = jax_compat.primitive_modules()
    from jax.extend.core import Primitive
    names = {v.name for m in modules for v in vars(m).values() if isinstance(v, Primitive)}
    assert {"dot_general", "gather", "scatter-add", "conv_general_dilated", "psum"} <= names
    eqn = jax.make_jaxpr(lambda x: x * 2)(1.0).eqns[0]
    frame = jax_compat.user_frame(eqn.source_info.traceback)
    assert frame is not None and frame.file_name == __file__
    assert jax_compat.user_frame(None) is None       # best effort: never raises
    assert jax_compat.slicing.GatherDimensionNumbers is jax.lax.GatherDimensionNumbers
    with pytest.raises(jax_compat.JaxVersionError, match="no jax._src.nothing_here"):
        jax_compat._private("jax._src.nothing_here")
