import sys
from pathlib import Path

# tests run with PYTHONPATH=python; make a bare `pytest tests/theory` work too
_py = Path(__file__).resolve().parents[2] / "python"
if str(_py) not in sys.path:
    sys.path.insert(0, str(_py))
