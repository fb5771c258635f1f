"""`linnet.torch.load`: a whole program, as a model when it has a root block with entries,
else as a module-like object of its entries.

Apart from `loader.py` because it chooses between the two runtimes of a program, the block
model (`block_module.py`, which builds on `loader.py`) and the entries (`loader.py`), and
so sits above both. `block_module` imports torch at its top, so it is imported when a model
is loaded: `import linnet.torch` needs no torch.
"""

from __future__ import annotations

from typing import Any

from ..errors import LinnetError
from ..passes.front.block_entry import choose_root
from ..pipeline import NUMERICS, check_choice
from .loader import LoadedModule, checked, read_program


def load(path: str, *, generics: dict[str, Any] | None = None, weights: Any = None,
         root: str | None = None, compile: bool = True, numerics: str = "equivalent",
         device: Any = None, tuning: Any = None) -> Any:
    """The Linnet program at `path`, loaded.

    A program with a root block (the only block with entries, or the block `root` names)
    gives a `torch.nn.Module` of the model (`linnet.torch.block_module.BlockModel`):
    `generics` are the values of the root block's generics (ints, dtype names; defaults
    fill the rest), `weights` a `.safetensors` path or a mapping of path -> tensor (a
    `state_dict`), checked against the parameter manifest before it is copied, or None
    (params stay zeros until `load_state_dict`), `device` where params and states are
    made. Its entries are methods (`model.logits(x)`), `model(x)` runs `forward` or the
    only entry, `reset_state()` zeros the states. See docs/models.md, "Loading weights".

    Any other program gives a module-like object of its entries: `m.run(x, w)` calls the
    entry `run` exactly as `load_function(path, "run", compile=compile, numerics=numerics)`
    would, binding generics from the inputs at each call, cached per binding;
    `m.source("run", R=5, C=40)` is the generated module's text for one binding. `tuning`
    is `load_function`'s.
    """
    check_choice("numerics", numerics, NUMERICS)
    text = read_program(path)
    analysis = checked(text, str(path))
    if root is not None or choose_root(analysis, None, None) is not None:
        from .block_module import load_model  # imports torch
        return load_model(str(path), text, analysis, generics=generics, weights=weights, root=root,
                          compile=compile, numerics=numerics, device=device, tuning=tuning)
    given = [k for k, v in (("generics", generics), ("weights", weights), ("device", device))
             if v is not None]
    if given:
        raise LinnetError(f"{given[0]}= is for a program with a root block, and no block of "
                          f"{str(path)!r} has entries (name one with root=)")
    return LoadedModule(path, compile, numerics, tuning, text, analysis)
