"""``boardgym serve``'s JSON API through FastAPI's TestClient, and the command's refusals."""

from __future__ import annotations

import socket

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient

from boardgym.envs.games.records import GameRecord, parse_records
from boardgym.play.web import command
from boardgym.play.web.catalog import catalog
from boardgym.play.web.server import MAX_BODY_BYTES, create_app

PASS_POSITION = "OXXXXXXXXXXXXX-OXXOOOXOOXXXOXOXOXXXXOOXOXXXOOOXOXXOXXXOOX-OOOOOO X"
"""Reversi, X to move: its one move (g2, cell 14) leaves O no move, so O passes."""


@pytest.fixture(scope="module")
def players():
    return catalog()


@pytest.fixture
def client(players):
    return TestClient(create_app(players, seed=0))


def post(client, path, **body):
    return client.post(path, json=body)


def ok(response):
    assert response.status_code == 200, response.text
    return response.json()


def refused(response, status, *words):
    """The answer is ``status`` with one line of JSON naming ``words``."""
    assert response.status_code == status, response.text
    data = response.json()
    assert list(data) == ["error"]
    assert "\n" not in data["error"] and "Traceback" not in data["error"]
    for word in words:
        assert word in data["error"], data["error"]
    return data["error"]


def first_legal(answer):
    return int(min(answer["view"]["cells"], key=int))


def play_out(client, game="tictactoe", opponent="random", seat="first", **extra):
    """A whole game clicking the lowest legal cell each time; the answers in order."""
    answers = [ok(post(client, "/api/new", game=game, opponent=opponent, seat=seat, **extra))]
    while not answers[-1]["view"]["over"]:
        answers.append(ok(post(client, "/api/move", session=answers[0]["session"],
                               cell=first_legal(answers[-1]))))
    return answers


def test_games_lists_each_games_players_and_board_limits(client):
    games = {game["name"]: game for game in ok(client.get("/api/games"))["games"]}
    assert {"reversi", "four_in_a_row", "tictactoe"} <= set(games)
    assert "perfect" in games["tictactoe"]["players"]
    assert games["four_in_a_row"]["options"]["rows"] == {"default": 6, "min": 4, "max": 8}
    assert games["reversi"]["sides"] == ["X", "O"]


def test_a_seeded_game_is_the_same_game_again(players):
    first = play_out(TestClient(create_app(players, seed=0)))
    again = play_out(TestClient(create_app(players, seed=0)))
    assert first[0]["seat"] == "You are X. You go first."
    assert first[-1]["view"]["moves"] == again[-1]["view"]["moves"]
    status = first[-1]["view"]["status"]
    assert status in ("It's a tie.", "X wins. You win!", "O wins. You lose to random.")
    assert first[-1]["view"]["cells"] == {}


def test_the_computer_moves_first_when_the_person_is_second(client):
    answer = ok(post(client, "/api/new", game="tictactoe", opponent="perfect", seat="second"))
    assert answer["seat"] == "You are O. perfect (X) goes first."
    assert len(answer["view"]["moves"]) == 1
    assert answer["view"]["messages"][0].startswith("perfect (X) plays cell ")
    assert answer["view"]["status"] == "Your move (O)."


def test_a_click_in_a_column_drops_a_token_there(client):
    answer = ok(post(client, "/api/new", game="four_in_a_row", opponent="random",
                     seat="first", options={"rows": 5, "columns": 8}))
    assert len(answer["view"]["cells"]) == 5 * 8
    moved = ok(post(client, "/api/move", session=answer["session"], cell=3))
    assert moved["view"]["moves"][0] == "red 4"


def test_an_illegal_click_is_refused_and_the_game_unchanged(client):
    answer = ok(post(client, "/api/new", game="tictactoe", opponent="perfect", seat="second"))
    taken = answer["view"]["moves"][0].split()[-1]
    key = answer["session"]
    refused(post(client, "/api/move", session=key, cell=int(taken) - 1), 400,
            "not a legal move")
    refused(post(client, "/api/move", session=key, cell=9), 400, "from 0 to 8")
    record = parse_records(ok(post(client, "/api/record", session=key))["record"])[0]
    assert len(record.moves) == 1


def test_a_move_after_the_end_is_refused(client):
    answers = play_out(client)
    refused(post(client, "/api/move", session=answers[0]["session"], cell=0), 409,
            "game is over")


def test_undo_takes_back_the_persons_move_and_the_reply(client):
    answer = ok(post(client, "/api/new", game="tictactoe", opponent="perfect", seat="first"))
    key = answer["session"]
    refused(post(client, "/api/undo", session=key), 409, "nothing to undo")
    assert not answer["can_undo"]
    moved = ok(post(client, "/api/move", session=key, cell=4))
    assert len(moved["view"]["moves"]) == 2 and moved["can_undo"]
    undone = ok(post(client, "/api/undo", session=key))
    assert undone["view"]["moves"] == [] and not undone["can_undo"]
    assert len(undone["view"]["cells"]) == 9


def test_a_pass_is_announced(client):
    answer = ok(post(client, "/api/new", game="reversi", opponent="random", seat="first",
                     position=PASS_POSITION))
    assert list(answer["view"]["cells"]) == ["14"]
    moved = ok(post(client, "/api/move", session=answer["session"], cell=14))
    assert "O has no legal move and passes." in moved["view"]["messages"]
    assert moved["view"]["moves"][0] == "X g2, O passes"


def test_the_record_downloaded_reads_back(client):
    answers = play_out(client)
    data = ok(post(client, "/api/record", session=answers[0]["session"]))
    record = parse_records(data["record"])[0]
    assert data["filename"] == "boardgym-tictactoe.jsonl"
    assert record.players == ("human", "random") and record.source == "serve"
    assert (record.seed, record.index) == (0, 0)
    assert record.finished and len(record.moves) == len(answers[-1]["view"]["moves"])


def test_watching_steps_to_the_end(client):
    answer = ok(post(client, "/api/watch", game="tictactoe", first="perfect", second="perfect"))
    key, steps = answer["session"], 0
    assert answer["view"]["status"] == "perfect (X) to move."
    while not answer["view"]["over"]:
        answer = ok(post(client, "/api/step", session=key))
        steps += 1
    assert steps == 9 and answer["view"]["status"] == "It's a tie."
    refused(post(client, "/api/step", session=key), 409, "game is over")


def test_a_record_file_replays_to_its_result(client):
    games = [GameRecord("tictactoe", (4, 0, 8, 2, 1, 7, 6, 3, 5), ("perfect", "rules")),
             GameRecord("reversi", (14, 57), ("a", "b"), start=PASS_POSITION)]
    text = "\n".join(game.to_json() for game in games) + "\n"
    answer = ok(post(client, "/api/replay", text=text))
    assert [game["moves"] for game in answer["games"]] == [9, 2]
    assert answer["view"]["current"] == 0 and answer["view"]["status"] == "The start (9 moves)."
    key = answer["session"]
    last = ok(post(client, "/api/show", session=key, game=0, ply=9))
    assert last["view"]["status"] == "It's a tie." and last["view"]["over"]
    passing = ok(post(client, "/api/show", session=key, game=1, ply=1))
    assert passing["view"]["messages"] == ["O has no legal move and passes."]
    assert passing["shown_game"] == 1
    refused(post(client, "/api/show", session=key, game=1, ply=3), 400, "from 0 to 2")
    refused(post(client, "/api/show", session=key, game=2, ply=0), 400, "from 0 to 1")


BAD_NEW = [
    ({"game": "chess"}, "unknown game 'chess'"),
    ({"opponent": "nobody"}, "unknown player 'nobody'"),
    ({"opponent": "checkpoints/tictactoe.zip"}, "unknown player"),
    ({"opponent": "shipped:tictactoe"}, "unknown player"),
    ({"opponent": 3}, "opponent"),
    ({"seat": "middle"}, "seat must be first, second or random"),
    ({"options": {"size": 3}}, "size"),
    ({"game": "four_in_a_row", "options": {"rows": 99}}, "rows"),
    ({"options": {"rows": "6"}}, "options.rows"),
    ({"position": "garbage"}, "the position"),
    ({"position": "XXXOO----"}, "finished game"),
    ({"colour": "red"}, "colour"),
]


@pytest.mark.parametrize(("change", "words"), BAD_NEW)
def test_a_bad_new_game_is_refused_in_one_line(client, change, words):
    body = {"game": "tictactoe", "opponent": "random", "seat": "first", **change}
    refused(client.post("/api/new", json=body), 400, words)


def test_bad_watch_replay_and_session_requests_are_refused(client):
    game = ok(post(client, "/api/new", game="tictactoe", opponent="random", seat="first"))
    key = game["session"]
    refused(post(client, "/api/watch", game="tictactoe", first="random", second="/etc/x.zip"),
            400, "unknown player")
    refused(post(client, "/api/move", session="nope", cell=0), 404, "unknown session")
    refused(post(client, "/api/move", session=key, cell="4"), 400, "cell")
    refused(post(client, "/api/move", session=key, cell=True), 400, "cell")
    refused(post(client, "/api/step", session=key), 400, "play session")
    refused(post(client, "/api/show", session=key, game=0, ply=0), 400, "play session")
    refused(post(client, "/api/replay", text=5), 400, "text")
    refused(post(client, "/api/replay", text=""), 400, "no game records")
    refused(post(client, "/api/replay", text='{"format": "boardgym-record/1"}'), 400,
            "truncated")
    bad_move = GameRecord("tictactoe", (4, 0), ("a", "b")).to_json().replace('"5 1"', '"5 5"')
    refused(post(client, "/api/replay", text=bad_move), 400, "line 1", "move 2")
    refused(client.get("/api/nothing"), 404)


def test_garbage_json_is_refused(client):
    answer = client.post("/api/new", content=b"{not json",
                         headers={"Content-Type": "application/json"})
    refused(answer, 400, "not valid JSON")
    refused(client.post("/api/new", json=[1, 2]), 400)


def test_a_huge_body_is_refused_with_413(client):
    huge = b"x" * (MAX_BODY_BYTES + 1)
    refused(client.post("/api/replay", content=huge), 413, "over")

    def chunks():
        for _ in range(5):
            yield b"y" * (MAX_BODY_BYTES // 4)

    refused(client.post("/api/replay", content=chunks()), 413, "over")
    refused(client.post("/api/replay", content=b"{}", headers={"Content-Length": "many"}), 400,
            "Content-Length")


def test_a_checkpoint_is_offered_under_its_stem():
    players = catalog(["ntuple:1@shipped:tictactoe_ntuple"])
    client = TestClient(create_app(players, seed=0))
    games = {game["name"]: game for game in ok(client.get("/api/games"))["games"]}
    assert games["tictactoe"]["players"][-1] == "tictactoe_ntuple"
    assert "tictactoe_ntuple" not in games["reversi"]["players"]
    answers = play_out(client, opponent="tictactoe_ntuple")
    record = parse_records(ok(post(client, "/api/record",
                                   session=answers[0]["session"]))["record"])[0]
    assert record.players == ("human", "ntuple:1@shipped:tictactoe_ntuple")


@pytest.mark.parametrize(("spec", "words"), [
    ("nowhere/missing.zip", "--checkpoint nowhere/missing.zip: checkpoint"),
    ("random", "not a checkpoint"),
])
def test_serve_refuses_a_bad_checkpoint(capsys, spec, words):
    with pytest.raises(SystemExit) as stop:
        command.main(["--checkpoint", spec])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("boardgym serve: error: ") and words in err
    assert err.count("\n") == 1


def test_serve_refuses_a_port_in_use(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert command.main(["--port", str(port)]) == 2
    assert capsys.readouterr().err == (f"boardgym serve: error: port {port} is in use; "
                                       "choose another with --port\n")


def test_serve_names_the_extra_when_fastapi_is_missing(capsys, monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "fastapi", None)
    assert command.main([]) == 2
    err = capsys.readouterr().err
    assert "pip install 'boardgym[web]'" in err and err.count("\n") == 1


def test_serve_prints_its_address(capsys, monkeypatch):
    served = []
    monkeypatch.setattr(command, "run", lambda app, sock: served.append(sock.getsockname()))
    assert command.main(["--port", "0", "--seed", "1"]) == 0
    port = served[0][1]
    assert capsys.readouterr().out == (f"boardgym serve: http://127.0.0.1:{port}/ "
                                       "(Ctrl-C stops)\n")
