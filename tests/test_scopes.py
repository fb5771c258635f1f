"""ScopeStack: nested scopes whose lookups cost one dict access at any depth."""

from __future__ import annotations

from linnet.scopes import ScopeStack


def test_the_innermost_definition_wins_and_leaving_a_scope_restores_the_outer():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("x", 1)
    s.push()
    assert s.lookup("x") == 1
    s.define("x", 2)
    s.define("y", 3)
    assert (s.lookup("x"), s.lookup("y")) == (2, 3)
    s.pop()
    assert (s.lookup("x"), s.lookup("y")) == (1, None)


def test_assign_rebinds_in_the_scope_that_declared_it():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("x", 1)
    s.push()
    assert s.assign("x", 5) and not s.assign("z", 0)
    s.pop()
    assert s.lookup("x") == 5


def test_define_beside_puts_a_key_in_the_scope_holding_a_name():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("v", 1)
    s.push()
    s.push()
    s.define_beside("v", "v__0", 7)
    s.define("v__0", 8)  # shadowed inside, as any name
    assert s.lookup("v__0") == 8
    s.pop()
    s.pop()
    assert s.lookup("v__0") == 7


def test_a_redefinition_in_one_scope_is_undone_once():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("x", 1)
    s.push()
    s.define("x", 2)
    s.define("x", 3)
    s.pop()
    assert s.lookup("x") == 1


def test_lookups_do_not_walk_the_stack():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("x", 0)
    for k in range(10_000):
        s.push()
        s.define(f"v{k}", k)
    # the innermost holder of each key is one index away, however deep
    assert s.lookup("x") == 0 and s.lookup("v9999") == 9999
    for _ in range(10_000):
        s.pop()
    assert s.lookup("v0") is None and s.lookup("x") == 0


def test_names_are_every_key_in_scope_and_leave_with_their_scope():
    s: ScopeStack[str, int] = ScopeStack()
    s.define("x", 1)
    s.push()
    s.define("y", 2)
    assert s.names() == {"x", "y"}
    s.pop()
    assert s.names() == {"x"}
