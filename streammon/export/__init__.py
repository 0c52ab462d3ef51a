"""The export edge: the Prometheus collector, the HTTP(S) exporter, and the rule and dashboard generators.

>>> from streammon.export import MonitorCollector, serve  # the two things most users import
"""

from streammon.export.prometheus import MonitorCollector
from streammon.export.server import serve

__all__ = ["MonitorCollector", "serve"]
