"""``boardgym serve``'s page in a real browser: Playwright driving the system's Chromium.

The server runs in a thread on a free port for the module, one browser for the module. Without
Chromium the tests are skipped, except on CI (``CI=true``), where they must run. With
``BOARDGYM_SCREENSHOTS=DIR`` the page's screenshots are also written to DIR
(``make screenshots`` refreshes docs/images/ so).
"""

from __future__ import annotations

import io
import os
import re
import shutil
import threading
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("playwright.sync_api")

import uvicorn
from playwright import sync_api

from boardgym.envs.games import game as game_record
from boardgym.envs.games.records import GameRecord, parse_records
from boardgym.play.flow import first_planes
from boardgym.play.web.catalog import catalog
from boardgym.play.web.command import address, listening_socket
from boardgym.play.web.server import create_app

PASS_POSITION = "OXXXXXXXXXXXXX-OXXOOOXOOXXXOXOXOXXXXOOXOXXXOOOXOXXOXXXOOX-OOOOOO X"
"""Reversi, X to move: its one move (g2, cell 14) leaves O no move, so O passes."""
RESULT = re.compile(r"(wins|tie)")
STARTUP_SECONDS = 10
MIN_COLOURS = 50
"""A screenshot of the page has many distinct colours (a blank one has one or two)."""


@pytest.fixture(scope="module")
def url():
    sock = listening_socket("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(catalog(), seed=0), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + STARTUP_SECONDS
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield address(sock)
    server.should_exit = True
    thread.join(STARTUP_SECONDS)
    sock.close()


@pytest.fixture(scope="module")
def browser():
    chromium = shutil.which("chromium")
    if chromium is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Chromium is missing: .ci/run installs it with apt-get install chromium")
        pytest.skip("Chromium is missing (apt-get install chromium)")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture
def page(browser, url):
    page = browser.new_page(viewport={"width": 1280, "height": 800})
    page.goto(url)
    page.wait_for_function("document.body.dataset.pending === '0'")
    yield page
    page.close()


def act(page, do):
    """Do ``do()`` and wait until the page has finished the action it started."""
    done = int(page.get_attribute("body", "data-done"))
    do()
    page.wait_for_function(f"Number(document.body.dataset.done) > {done}")


def new_game(page, game, opponent="random", seat="first", position=None, **options):
    page.select_option("#game", game)
    page.select_option("#opponent", opponent)
    page.select_option("#seat", seat)
    for name, value in options.items():
        page.fill(f"#option-{name}", str(value))
    if position is not None:
        page.fill("#position", position)
    act(page, lambda: page.click("#new"))


def click_cell(page, cell):
    act(page, lambda: page.click(f'#board [data-cell="{cell}"]'))


def legal_cells(page):
    return [int(cell) for cell in page.eval_on_selector_all(
        "#board [data-cell].legal", "cells => cells.map(c => c.dataset.cell)")]


def play_to_the_end(page, most):
    """Click the first legal cell until the game ends; the number of clicks."""
    for clicks in range(most):
        cells = legal_cells(page)
        if not cells:
            return clicks
        click_cell(page, cells[0])
    return most


def status(page):
    return page.inner_text("#status")


def test_a_tictactoe_game_is_played_by_clicks_to_its_result(page):
    new_game(page, "tictactoe", opponent="perfect")
    assert page.inner_text("#seat-line") == "You are X. You go first."
    assert status(page) == "Your move (X)."
    assert len(legal_cells(page)) == 9 and page.locator("#board .hint").count() == 9
    assert play_to_the_end(page, 9) >= 3
    assert status(page) in ("It's a tie.", "O wins. You lose to perfect.")
    assert page.locator("#board .last").count() >= 1
    assert page.locator("#moves li").count() >= 5


def test_a_four_in_a_row_game_is_played_to_its_end_by_columns(page):
    new_game(page, "four_in_a_row", opponent="lookahead:2", rows=5, columns=6)
    assert len(legal_cells(page)) == 5 * 6
    assert play_to_the_end(page, 30) > 0
    assert RESULT.search(status(page)), status(page)


def test_a_reversi_pass_is_shown_to_the_person(page):
    new_game(page, "reversi", position=PASS_POSITION)
    assert legal_cells(page) == [14]
    click_cell(page, 14)
    assert "O has no legal move and passes." in page.inner_text("#messages")
    assert page.inner_text("#moves li:first-child") == "X g2, O passes"
    assert status(page) == "Your move (X)."
    click_cell(page, 57)
    assert status(page).startswith("X: ") and "You beat the computer by" in status(page)


def test_an_illegal_click_is_refused_and_the_board_unchanged(page):
    new_game(page, "tictactoe", opponent="perfect", seat="second")
    taken = int(page.inner_text("#moves li:first-child").split()[-1]) - 1
    before = page.inner_html("#board")
    click_cell(page, taken)
    assert "is not a legal move here" in page.inner_text("#error")
    assert page.inner_html("#board") == before
    assert page.locator("#moves li").count() == 1


def test_the_game_shown_downloads_as_a_record(page):
    new_game(page, "tictactoe", opponent="rules")
    play_to_the_end(page, 9)
    with page.expect_download() as download:
        page.click("#download")
    record = parse_records(Path(download.value.path()).read_text())[0]
    assert download.value.suggested_filename == "boardgym-tictactoe.jsonl"
    assert record.players == ("human", "rules") and record.finished
    assert len(record.moves) == page.locator("#moves li").count()


def test_two_players_are_watched_to_the_end(page):
    page.click('.tab[data-mode="watch"]')
    page.select_option("#game", "tictactoe")
    page.select_option("#watch-first", "perfect")
    page.select_option("#watch-second", "perfect")
    page.fill("#speed", "0")
    page.click("#watch-start")
    page.wait_for_function("document.getElementById('status').textContent === \"It's a tie.\"")
    assert page.locator("#moves li").count() == 9
    assert page.is_disabled("#watch-pause")


def random_game(name, seed):
    rules, rng = game_record(name).rules, np.random.default_rng(seed)
    state, moves = rules.initial_state(), []
    while not rules.is_terminal(state):
        move = int(rng.choice(np.flatnonzero(rules.legal_mask(state))))
        moves.append(move)
        state = rules.apply(state, move)
    return GameRecord(name, tuple(moves), ("random", "corner_best"))


def test_a_record_is_replayed_to_its_final_position(page, tmp_path):
    records = [random_game("tictactoe", 1), random_game("reversi", 2)]
    file = tmp_path / "games.jsonl"
    file.write_text("".join(record.to_json() + "\n" for record in records))
    page.click('.tab[data-mode="replay"]')
    act(page, lambda: page.set_input_files("#record-file", str(file)))
    act(page, lambda: page.select_option("#record-game", "1"))
    act(page, lambda: page.click("#forward"))
    assert page.inner_text("#moves li.current") == page.inner_text("#moves li:first-child")
    act(page, lambda: page.click("#last"))
    record = records[1]
    planes = first_planes(record.record, record.final_state())
    drawn = [page.locator(f"#board .stone.{side}").count() for side in ("first", "second")]
    assert drawn == [int(planes[0].sum()), int(planes[1].sum())]
    assert page.inner_text("#moves li.current") == page.inner_text("#moves li:last-child")
    assert RESULT.search(status(page)) and page.is_disabled("#forward")


def non_blank(png):
    """The number of distinct colours of a PNG's pixels."""
    import matplotlib.image

    pixels = matplotlib.image.imread(io.BytesIO(png), format="png")
    return len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0))


@pytest.mark.parametrize("name", ["reversi", "four_in_a_row", "tictactoe"])
def test_each_games_page_draws_its_board(page, tmp_path, name):
    new_game(page, name)
    cells = legal_cells(page)
    click_cell(page, cells[len(cells) // 2])
    png = page.screenshot(path=str(tmp_path / f"web_{name}.png"))
    assert non_blank(png) >= MIN_COLOURS
    folder = os.environ.get("BOARDGYM_SCREENSHOTS")
    if folder:
        Path(folder, f"web_{name}.png").write_bytes(png)
