"""Step through a game record in the terminal: ``boardgym replay FILE [--game N] [--pause]``.

Without ``--game`` it sums the file up: how many games, of which game, and each player's wins
and the ties, counted from the records' results and seats (for a file written by
``boardgym evaluate --record``, the counts the match printed). With ``--game N`` (the
record's ``index``, the game's number in its match from 0; a file without indices counts
its lines from 0) it shows that game move by move: the board after each move with the move
marked, the passes, and the result line. ``--pause`` waits for Enter before each move
(``quit`` stops). The file is read and every game's moves checked through the rules first
(``envs.games.records``): a bad file is refused with one line naming the line, the game and
the move.
"""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import suppress

from boardgym.envs.games.records import GameRecord, read_records
from boardgym.play.flow import QUIT, BoardView, Move
from boardgym.train.common.commands import CommandParser, int_at_least

MAX_GAME_NUMBER = 10**9
"""The largest ``--game`` accepted (far above any match's games)."""


def parser() -> argparse.ArgumentParser:
    """The ``boardgym replay`` argument parser."""
    p = CommandParser(prog="boardgym replay", description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("file", help="a game record file (JSON lines, as evaluate --record, "
                                "tournament --record, play --record and the web page write)")
    p.add_argument("--game", type=int_at_least(0, MAX_GAME_NUMBER), metavar="N",
                   help="show game N move by move (its index in the match, from 0)")
    p.add_argument("--pause", action="store_true",
                   help="wait for Enter before each move ('quit' stops)")
    return p


def number(records: Sequence[GameRecord], position: int) -> int:
    """The game number of ``records[position]``: its index, else its position in the file."""
    index = records[position].index
    return position if index is None else index


def pick(records: Sequence[GameRecord], wanted: int, source: str) -> GameRecord:
    """The record of game ``wanted``.

    Raises:
        ValueError: no such game in the file (the message gives the numbers there are).
    """
    numbers = [number(records, k) for k in range(len(records))]
    if wanted not in numbers:
        raise ValueError(f"{source} has no game {wanted}; its games are numbered "
                         f"{min(numbers)} to {max(numbers)}")
    return records[numbers.index(wanted)]


def summary(records: Sequence[GameRecord], source: str) -> list[str]:
    """The file in a few lines: the games, each player's wins, the ties."""
    games = Counter(record.game for record in records)
    wins: Counter[str] = Counter()
    ties = 0
    for record in records:
        winner = record.winner()
        if winner is None:
            ties += record.finished
        else:
            wins[record.players[winner]] += 1
    players = list(dict.fromkeys(p for record in records for p in record.players))
    kinds = ", ".join(f"{count} {game}" for game, count in games.items())
    lines = [f"{len(records)} game{'s' * (len(records) != 1)} in {source} ({kinds})"]
    lines += [f"{player} wins: {wins[player]}" for player in players]
    unfinished = sum(not record.finished for record in records)
    lines.append(f"Ties: {ties}" + (f"  (unfinished: {unfinished})" if unfinished else ""))
    first = number(records, 0)
    lines.append(f"boardgym replay {source} --game {first} shows game {first} move by move")
    return lines


def heading(record: GameRecord, view: BoardView, game: int) -> list[str]:
    """Who played which side, and how to play the game again."""
    sides = ", ".join(f"{player} ({view.side_name(side)})"
                      for side, player in enumerate(record.players))
    lines = [f"Game {game}: {sides}"]
    if record.seed is not None and record.source:
        lines.append(f"Played by boardgym {record.source} with --seed {record.seed}"
                     + (f" (game {record.index})" if record.index is not None else ""))
    return lines


def result_line(record: GameRecord, view: BoardView) -> str:
    """The end of the game: the disc count where the game has one, and who won."""
    final = record.final_state()
    if not record.finished:
        return "The record ends before the game does."
    winner = record.winner()
    said = "It's a tie." if winner is None else \
        f"{view.side_name(winner)} ({record.players[winner]}) wins."
    score = view.score_text(final)
    return f"{score}. {said}" if score else said


def show(record: GameRecord, game: int, write: Callable[[str], None],
         wait: Callable[[], bool] | None = None) -> None:
    """Write game ``game`` move by move; ``wait()`` (if given) before each move returns
    False to stop."""
    view = BoardView(record.record, dict(record.options))
    states = record.states()
    for line in heading(record, view, game):
        write(line)
    write(view.text(states[0]).rstrip("\n"))
    rules = record.record.rules
    for ply, (action, before, after) in enumerate(zip(record.moves, states[:-1], states[1:],
                                                      strict=True), start=1):
        if wait is not None and not wait():
            return
        passed = after.to_move == before.to_move and not rules.is_terminal(after)
        move = Move(before, action, after, 1 - int(before.to_move) if passed else None)
        opening = " (opening)" if ply <= record.opening else ""
        write(f"{ply}. {view.side_name(int(before.to_move))} plays "
              f"{view.move_name(action)}{opening}")
        write(view.text(after, last=move).rstrip("\n"))
        if move.passed is not None:
            write(f"{view.side_name(move.passed)} has no legal move and passes.")
    write(result_line(record, view))


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``boardgym replay``; returns 0 (2 with one line on stderr for a bad file or
    game number)."""
    p = parser()
    args = p.parse_args(argv)
    try:
        records = read_records(args.file)
        chosen = None if args.game is None else pick(records, args.game, args.file)
    except (ValueError, OSError) as error:
        p.error(str(error))
    if chosen is None:
        print("\n".join(summary(records, args.file)))
        return 0
    wait = (lambda: input("Press Enter for the next move. ").strip().lower() != QUIT) \
        if args.pause else None
    with suppress(EOFError):  # the input ended while paused: stop there
        show(chosen, args.game, print, wait)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
