"""kaoshi view: every run and every answer of a store in the browser, live while runs write.

    import kaoshi.view
    kaoshi.view.serve("runs.sqlite")                   # until Ctrl-C, as `kaoshi view` does
    with kaoshi.view.start("runs.sqlite") as viewer:   # in a thread (a notebook): viewer.url
        ...

The store is opened read-only; the viewer serves on this machine only unless allowed otherwise. It needs
the view extra (starlette, uvicorn): pip install 'kaoshi[view]'. Importing this package imports neither.
"""

from kaoshi.view.server import DEFAULT_HOST, DEFAULT_PORT, RunningView, create_app, serve, start

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "RunningView", "create_app", "serve", "start"]
