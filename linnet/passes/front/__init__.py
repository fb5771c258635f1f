"""The front end's passes: parse, check, bind the entry's generics, flatten blocks, and
elaborate the bound entry into tensor IR."""
