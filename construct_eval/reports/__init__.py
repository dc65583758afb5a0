"""Run folders to tables and report objects: a run's scores collected with their labels
(:mod:`.collect`), its tables (:mod:`.tables`), the analyses ``evaluate``, ``calibrate`` and
``bias`` (:mod:`.run_analyses`) and the objects they return (:mod:`.report_objects`), the paper
comparison, cost, the combined scorers a run's rows make (:mod:`.combined`), and the pairs a paper
figure draws on the items both scores rated (:mod:`.figure_pairs`).

Sits on :mod:`construct_eval.stats` (the numbers) and :mod:`construct_eval.display` (the
drawing); :mod:`construct_eval.paper` sits on it.
"""
