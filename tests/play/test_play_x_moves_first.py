"""``boardgym play`` names the side that moves first after the game's first side name (``X``,
``red``), as every game's position text does: the seat messages, the move lines and the board
agree with the notation, whoever the draw (or ``--side``/``--first``) seats first."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from boardgym.envs.games import game
from boardgym.play import command as play
from boardgym.play import terminal as play_terminal
from boardgym.play.flow import Options, QuitGame

GAMES = ["reversi", "four_in_a_row", "tictactoe"]


class FirstLegal:
    """Plays the first legal move of a game with these ``rules``."""

    def __init__(self, rules: Any) -> None:
        self.rules = rules

    def act(self, state: Any, rng: np.random.Generator) -> int:
        return int(np.flatnonzero(self.rules.legal_mask(state))[0])


def session(name: str, side: int | None, first: str = "random", seed: int = 0
            ) -> tuple[list[str], list[str]]:
    """The lines written and the prompts read in a terminal match that quits at the
    person's first move."""
    out: list[str] = []
    prompts: list[str] = []

    def read(prompt: str) -> str:
        prompts.append(prompt)
        out.append(prompt)
        return "quit"

    options = Options(name, "bot", side, first, {}, False, seed)
    terminal = play_terminal.Terminal(options, FirstLegal(game(name).rules),
                                      np.random.default_rng(seed), read=read, write=out.append)
    with pytest.raises(QuitGame):
        terminal.run()
    return out, prompts


@pytest.mark.parametrize("name", GAMES)
def test_play_x_moves_first(name: str) -> None:
    """The person on the second side: the computer opens, as the first side, and the person
    is then asked for the second side's move."""
    first, second = game(name).side_names
    out, prompts = session(name, side=1)
    text = "\n".join(out)
    assert f"You are {second}. bot ({first}) goes first." in out
    opened = text.index(f"{first} (bot) plays")
    assert opened < text.index(f"Your move ({second}): ")
    assert prompts == [f"Your move ({second}): "]
    assert "goes first" not in text.replace(f"bot ({first}) goes first", "")


@pytest.mark.parametrize("name", GAMES)
def test_play_first_side_name_is_the_person_who_moves_first(name: str) -> None:
    first, _ = game(name).side_names
    out, prompts = session(name, side=0)
    assert f"You are {first}. You go first." in out
    assert prompts == [f"Your move ({first}): "]
    assert not any("plays" in line for line in out)


@pytest.mark.parametrize("seed", range(6))
def test_drawn_seats_name_the_first_mover_x(seed: int) -> None:
    """Without ``--side``/``--first`` the draw says who moves first, and the side names follow
    it: whoever opens plays X."""
    out, prompts = session("tictactoe", side=None, seed=seed)
    assert out[1] == "X moves first; who does is drawn each round."
    if out[2] == "You are X. You go first.":
        assert prompts == ["Your move (X): "]
    else:
        assert out[2] == "You are O. bot (X) goes first."
        assert any(line.startswith("X (bot) plays cell") for line in out)
        assert prompts == ["Your move (O): "]


def test_play_x_moves_first_board_and_score_agree_with_the_notation() -> None:
    """Reversi with the person on O: after the computer's first move the board shows it as
    X's (four X discs and one O, as ``rules.parse`` reads the position after one move)."""
    out, _ = session("reversi", side=1)
    assert "X: 4  O: 1" in out


def test_play_options_refuse_a_side_that_does_not_move_first_first(capsys) -> None:
    """The old "You are X. rules goes first." cannot happen: --side X with --first computer
    is refused in one line."""
    with pytest.raises(SystemExit) as exit_info:
        play.main(["tictactoe", "--side", "x", "--first", "computer"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "--side X and --first computer disagree: X moves first" in err
    assert err.count("\n") == 1
