"""aqmlab: a laboratory for router buffer management.

The simulator core is Rust (``aqmlab._core``); this package validates
scenarios, runs them and turns their results into data frames, files and
plots. ``aqmlab.theory`` holds the seeds' analytical models and needs no
compiled code.

    import aqmlab
    res = aqmlab.run("scenarios/dumbbell.toml")
    res.flows, res.queues, res.timeseries     # polars DataFrames
    sw = aqmlab.sweep("scenarios/dumbbell.toml", vary={"tcp.variant": ["reno", "newreno"]}, seeds=3)
    sw.runs, sw.summary                       # a row per run; mean, std, 95% CI

``Scenario`` and ``Results`` (pydantic, polars) are imported on first use, so
``import aqmlab`` stays cheap.
"""

from typing import TYPE_CHECKING, Any

from .errors import UserError
from .run import run  # the function shadows the submodule of the same name

__version__ = "0.4.0"
__all__ = ["run", "sweep", "Scenario", "Results", "UserError", "__version__"]

if TYPE_CHECKING:  # pragma: no cover
    from .results import Results
    from .scenario import Scenario


def __getattr__(name: str) -> Any:
    if name == "Scenario":
        from .scenario import Scenario

        return Scenario
    if name == "Results":
        from .results import Results

        return Results
    if name == "sweep":
        from .sweeps import sweep

        return sweep
    raise AttributeError(f"module 'aqmlab' has no attribute {name!r}")
