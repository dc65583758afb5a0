"""The paper's figure set and LaTeX tables from recorded runs (``construct-eval figures``):
the data each figure reads (:mod:`.figure_data`), its drawing (:mod:`.paper_plots`,
:mod:`.planted_plots`), its tables (:mod:`.figure_tables`, :mod:`.paper_tables`), the set and
its index (:mod:`.figures`, :mod:`.figure_set`, :mod:`.figure_index`).

The top of the analysis stack: reads :mod:`construct_eval.reports`.
"""
