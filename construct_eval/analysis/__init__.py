"""From scores and labels to numbers and figures: detection metrics with document-bootstrap
intervals, calibration, positional bias, per-run tables and plots, and paper figures/tables."""
