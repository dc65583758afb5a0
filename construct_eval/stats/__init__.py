"""Statistics on plain arrays: numpy, scipy and scikit-learn, no run folders, no drawing.

Detection metrics with document-bootstrap intervals and paired comparisons (:mod:`.metrics`,
:mod:`.resampled`), calibrators fitted out of fold and their metrics (:mod:`.calibrators`,
:mod:`.out_of_fold`, :mod:`.calibration`, :mod:`.calibration_metrics`), readings of a 1-10 rating
as an error rate (:mod:`.rating_readings`) and the arithmetic of positional bias (:mod:`.bias`).
The bottom of the analysis stack: :mod:`construct_eval.reports` builds these arrays from run
folders, :mod:`construct_eval.display` draws what they return.
"""
