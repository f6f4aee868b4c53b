"""``boardgym serve``: a local web page to play, watch and replay games (the ``web`` extra).

The page (``static/``: one HTML page, vanilla JavaScript, no build step, nothing from
elsewhere) talks to a small JSON API (``server``) over games kept in memory
(``sessions``); the players it offers are the server's list (``catalog``): the built-in AIs
of each game and the checkpoints named at start-up, never a path sent by the page. The
command is ``command``. Only ``server`` and ``command`` import FastAPI and uvicorn.
"""
