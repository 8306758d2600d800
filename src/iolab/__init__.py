"""iolab: an open, automated storage test bench (SNIA PTS, RWSW, characterisation)."""

__version__ = "0.1.0"
