"""``python -m aqmlab``: the same as the ``aqmlab`` command."""

from .cli import main

if __name__ == "__main__":
    main()
