"""Package discovery for setuptools; every other setting is in pyproject.toml.

Every folder with an ``__init__.py`` under ``simdist/`` and ``components/`` (installed as ``simdist.components``)
is a package, so a new task, agent or component folder needs no entry anywhere.
"""

from setuptools import find_packages, setup

setup(
    packages=[
        "simdist",
        *(f"simdist.{name}" for name in find_packages("simdist")),
        "simdist.components",
        *(f"simdist.components.{name}" for name in find_packages("components")),
        "simdist.zoo_files",
    ]
)
