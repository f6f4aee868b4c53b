"""People play: the ``play`` command (``command``), its rounds and seats (``flow``), the
terminal (``terminal``) and the pygame window (``window``, drawn by ``drawing``).
"""
