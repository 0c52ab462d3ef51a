"""``streammon serve``: one process that every worker and every language sends its predictions and labels to.

The StatsD / OpenTelemetry Collector pattern: services append to a buffer (``streammon.client``) or POST JSON
batches; the server owns one ``Monitor`` per configured model, its durable journal and periodic checkpoints
under ``state_dir``, and answers ``/metrics`` for Prometheus. ``config`` reads the TOML file, ``hub`` keeps the
monitors, ``api`` is the HTTP API (a WSGI app on the exporter's bounded HTTP core), ``run`` starts and stops it.
"""
