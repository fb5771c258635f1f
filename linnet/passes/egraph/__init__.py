"""The e-graph stage: kernel masks proved and tile products chosen with the rule sets
of `linnet.rules`."""
