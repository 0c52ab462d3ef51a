"""Counts into findings: the reference mix, prior shift, scores and their distortion flags, alerts, reports.

Pure functions over integer counts copied from the windows; frozen results.
"""
