"""Workflows that join the store and the calibration library: plain functions taking a progress object."""
