"""The test suite. Its folders mirror linnet/ (tests/passes/middle/test_cse.py tests
linnet/passes/middle/cse.py); language/, runtimes/ and project/ hold what cuts across
packages, and the corpora (spec, equivalence, golden, bodies, grad, fuzz, oracle) run whole
programs. Shared helpers: helpers/ and cases/, both on sys.path (conftest.py)."""
