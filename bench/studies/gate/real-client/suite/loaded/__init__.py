"""A package that loads a dependency at collection: its modules are imported after pytest-monitor measured the
process at session start, so what they keep is in every later test's memory. The change `dep10` adds one more."""

import decimal  # noqa: F401
import email.parser  # noqa: F401
import xml.dom.minidom  # noqa: F401

from work import ACTIVE

if "dep10" in ACTIVE:
    import heavy_dependency  # noqa: F401
