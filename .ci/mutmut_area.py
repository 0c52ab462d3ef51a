"""Run mutmut 3.8.1 with the settings of one area of streammon (used by .ci/mutation).

mutmut reads one table, ``[tool.mutmut]`` in pyproject.toml: that is the ``metrics`` area. Every other area is
a table ``[tool.streammon.mutation.AREA]`` whose keys replace the same keys of ``[tool.mutmut]`` (the rest,
e.g. ``pytest_add_cli_args``, is shared). Usage: ``python .ci/mutmut_area.py AREA MUTMUT-ARGS...``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import mutmut.configuration
import tomllib
from mutmut.__main__ import cli


def settings(area: str) -> dict[str, Any]:
    """The mutmut settings of one area: [tool.mutmut], overridden by the area's own table."""
    tool = tomllib.loads(Path("pyproject.toml").read_text("utf-8"))["tool"]
    areas: dict[str, dict[str, Any]] = tool.get("streammon", {}).get("mutation", {})
    if area == "metrics":
        return dict(tool["mutmut"])
    if area not in areas:
        sys.exit(f"no mutation area {area!r}: choose metrics or one of {sorted(areas)}")
    return {**tool["mutmut"], **areas[area]}


def main() -> None:
    area, *args = sys.argv[1:]
    chosen = settings(area)
    # mutmut 3.8.1 builds its Config from the reader _config_reader() returns; give it the area's table and
    # drop the Config already built from [tool.mutmut] when mutmut was imported.
    mutmut.configuration._config_reader = lambda: chosen.get
    mutmut.configuration.reset_config()
    if mutmut.configuration.config().only_mutate != chosen["only_mutate"]:
        sys.exit("mutmut did not take the area's settings: check .ci/mutmut_area.py against this mutmut version")
    sys.argv = ["mutmut", *args]
    cli()


if __name__ == "__main__":
    main()
