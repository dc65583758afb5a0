"""How results look to a reader: display names, colours and venue sizes (:mod:`.style`), the one
drawing stack every figure draws on an ``ax`` with (:mod:`.plots`), and the checks a reviewer
would make of a figure or a LaTeX table (:mod:`.readability`, :mod:`.tex_width`).

Drawing only: every number arrives computed (by :mod:`construct_eval.stats`).
"""
