"""The paper's figure set and LaTeX tables from recorded runs (``construct-eval figures``):
the data each figure reads (:mod:`.figure_data`), its drawing (the shared layout
:mod:`.paper_plots`; a module per figure: :mod:`.forest_plot`, :mod:`.review_plot`,
:mod:`.meaning_plot`, :mod:`.order_plot`, :mod:`.reliability_plot`, :mod:`.comparison_plot`,
:mod:`.planted_plots`), its tables (:mod:`.figure_tables`, :mod:`.paper_tables`), the set and
its index (:mod:`.figures`, :mod:`.figure_set`, :mod:`.figure_index`).

The top of the analysis stack: reads :mod:`construct_eval.reports`.
"""
