"""Windows over the labelled stream: cumulative, sliding by count, sliding by time.

Every window keeps one integer count matrix; every score is read from it. A
window is fed ``Batch`` objects by its ``Monitor`` (never directly) and answers
``snapshot(now)`` with a copy of its counts.

- ``Cumulative()`` — every sample since start (or reset). Name ``cumulative``.
- ``Sliding(size)`` — exactly the last ``size`` samples: a ring of cell ids
  (4 bytes a sample) and one subtraction per evicted sample. Name ``sliding_<size>``.
- ``Timed(seconds, buckets=60)`` — the samples whose time lies in the last
  ``seconds``, to one bucket's width (``seconds / buckets``): a ring of per-bucket
  count matrices, so memory depends on K and ``buckets``, never on throughput.
  Name ``timed_<seconds>s``. Time is the sample's ``t`` or the monitor's clock.

>>> Sliding(1000).name, Timed(3600).name, Cumulative().name
('sliding_1000', 'timed_3600s', 'cumulative')
"""

from streammon.counting.windows.base import EMPTY_BUCKET, Cumulative, Window
from streammon.counting.windows.sliding import DIRECT_CELLS, Sliding
from streammon.counting.windows.timed import Timed

__all__ = ["DIRECT_CELLS", "EMPTY_BUCKET", "Cumulative", "Sliding", "Timed", "Window"]
