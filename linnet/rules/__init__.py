"""Rule sets as data, run by the e-graph stage `egraph-tiles` (`linnet/passes/egraph/egraph_tiles.py`).

Each module holds one rule set: a docstring saying what it knows, a list `RULES` of
egglog rules over the term language of `terms.py` (one rule per line), and `RULE_SET`,
the egglog ruleset made of them. `MODULES` lists the modules and `RULE_SETS` their rule
sets, which the stage runs together; `docs/rules.md` says how to add a rule and watch
it fire.
"""

from . import index_algebra, mask_facts, tile_products, value_facts

MODULES = (index_algebra, mask_facts, tile_products, value_facts)
RULE_SETS = tuple(m.RULE_SET for m in MODULES)
