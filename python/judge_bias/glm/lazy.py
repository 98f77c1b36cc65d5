"""Modules imported on first use (issue 34).

JAX, numpyro, SciPy and krippendorff take seconds to import (ArviZ is not
imported: glm.mcmc_stats). Every build runs int_glm_results, and with no GLM
requested (glm_models: none, the test suite's setting) it fits nothing: it
only writes a "not requested" row per model, which needs the registry
(``models.MODELS``) and the settings, none of these libraries. The GLM
modules name them through ``module(name)``, a stand-in that imports the module
when one of its attributes is first read.

Every GLM runs in double precision (glm.sampler): JAX's ``jax_enable_x64`` is
set before the stand-in of a JAX or numpyro module hands out its first
attribute, so no array is made in single precision through these modules.
"""

from __future__ import annotations

import importlib
import sys
import types

X64_ROOTS = ("jax", "numpyro")


def enable_x64() -> None:
    """Double precision in JAX (before any array exists)."""
    import jax

    jax.config.update("jax_enable_x64", True)


class LazyModule(types.ModuleType):
    """A module imported when one of its attributes is first read."""

    def __getattr__(self, attr: str) -> object:
        if self.__name__.split(".")[0] in X64_ROOTS:
            enable_x64()
        loaded = importlib.import_module(self.__name__)
        # later reads find the attributes here, without this method
        self.__dict__.update(loaded.__dict__)
        return getattr(loaded, attr)


def module(name: str) -> types.ModuleType:
    """The module ``name`` if it is imported already, else a stand-in that
    imports it when first used."""
    loaded = sys.modules.get(name)
    if loaded is not None:
        if name.split(".")[0] in X64_ROOTS:
            enable_x64()
        return loaded
    return LazyModule(name)
