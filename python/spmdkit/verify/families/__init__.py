"""Samplers and reference kernels of op families, one module each.

Every module here is imported with the package; it registers samplers with
`spmdkit.verify.samplers.sampler` and kernels with `spmdkit.verify.kernels.kernel`, so a family
adds its proof without editing the shared modules.
"""
import importlib
import pkgutil

for _m in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_m.name}")
