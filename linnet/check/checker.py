"""Placeholder until the checker lands: no semantic checks yet."""


def check_modules(program):
    return []
