"""One feature of the language (docs/language.md) through every stage and backend."""
