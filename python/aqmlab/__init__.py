"""aqmlab: a laboratory for router buffer management.

The simulator core is Rust (``aqmlab._core``); this package validates
scenarios, runs them and turns their results into data frames, files and
plots. ``aqmlab.theory`` holds the seeds' analytical models and needs no
compiled code.
"""

__version__ = "0.1.0"
