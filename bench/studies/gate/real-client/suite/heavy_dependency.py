"""A dependency that keeps about 10 MB resident once imported (a table it builds at import, as many libraries do)."""

from work import touched

TABLE = touched(10)
