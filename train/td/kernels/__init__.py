"""The compiled TD self-play of each game, one module a game, each with ``play(net,
trainer, trace, env_kwargs, settings)`` (one chunk of games).

The rule every game's learner follows: both sides play with the one network, each valuing
afterstates as their owner. Each game starts with a uniformly drawn number of random
opening plies (nothing learned from them); then each move is, with probability
``epsilon``, a uniform legal move (it cuts the trace: nothing learns toward it), else the
move of the best afterstate (a finished game's result beats any value; ties drawn
uniformly). After each greedy move the previous afterstate learns toward the new one's
value, negated when the other side owns it (``agents.ntuple.network.learn``, with the
horizon of earlier afterstates); a move that ends the game brings the result itself.
"""
