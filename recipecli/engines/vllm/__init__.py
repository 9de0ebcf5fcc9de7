"""vllm: the engine folder (see recipecli/engines/__init__.py for the layout).

Light: importing it loads no engine model. ``spec.SPEC`` is the registry entry, ``pin.PIN`` the
pinned version, ``model.MODEL`` the EAGLE3 load path.
"""
