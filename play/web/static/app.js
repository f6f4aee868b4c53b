// boardgym serve: the page's script. Every game lives on the server; this script sends the
// person's choices and clicks to the JSON API and draws what it answers (the board SVG, the
// status line, the move list). body[data-pending] is "1" while a request is under way and
// body[data-done] counts the actions finished (shown or refused).
"use strict";

const state = {
  games: [],        // GET /api/games
  mode: "play",     // play | watch | replay
  answer: null,     // the last answer about a game
  pending: 0,
  done: 0,          // requests answered (body[data-done]): the tests wait on it
  watching: false,  // a watched game is running (not paused)
  timer: null,
};

const $ = (id) => document.getElementById(id);

async function api(path, body) {
  state.pending += 1;
  document.body.dataset.pending = "1";
  try {
    const response = await fetch(path, body === undefined ? {} : {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    const data = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
    if (!response.ok) {
      throw new Error(data.error || `the server answered ${response.status}`);
    }
    return data;
  } finally {
    state.pending -= 1;
    document.body.dataset.pending = state.pending ? "1" : "0";
  }
}

function showError(message) {
  $("error").textContent = message || "";
}

async function attempt(action) {
  try {
    showError("");
    await action();
  } catch (error) {
    showError(error.message);
  } finally {
    finished();
  }
}

function finished() {
  state.done += 1;
  document.body.dataset.done = String(state.done);
}

function gameInfo() {
  return state.games.find((game) => game.name === $("game").value);
}

function fillSelect(select, values, chosen) {
  select.replaceChildren(...values.map((value) => new Option(value, value)));
  if (chosen !== undefined && values.includes(chosen)) select.value = chosen;
}

function showGameChoices() {
  const info = gameInfo();
  fillSelect($("opponent"), info.players, info.default);
  fillSelect($("watch-first"), info.players, info.default);
  fillSelect($("watch-second"), info.players, info.players[0]);
  const options = $("board-options");
  options.replaceChildren();
  for (const [name, limits] of Object.entries(info.options)) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    Object.assign(input, { type: "number", min: limits.min, max: limits.max, value: limits.default });
    input.dataset.option = name;
    input.id = `option-${name}`;
    label.append(name, input);
    options.append(label);
  }
}

function setup() {
  const options = {};
  for (const input of $("board-options").querySelectorAll("input[data-option]")) {
    options[input.dataset.option] = Number.parseInt(input.value, 10);
  }
  const position = $("position").value.trim();
  return { game: $("game").value, options, position: position || null };
}

function render(answer) {
  state.answer = answer;
  const view = answer.view;
  const board = $("board");
  board.innerHTML = view.svg;
  board.classList.toggle("idle", Object.keys(view.cells).length === 0);
  for (const cell of Object.keys(view.cells)) {
    const rect = board.querySelector(`[data-cell="${cell}"]`);
    if (rect) rect.classList.add("legal");
  }
  $("status").textContent = view.status;
  $("seat-line").textContent = answer.seat || "";
  $("messages").replaceChildren(...view.messages.map((text) => {
    const item = document.createElement("li");
    item.textContent = text;
    return item;
  }));
  const moves = $("moves");
  moves.replaceChildren(...view.moves.map((text, index) => {
    const item = document.createElement("li");
    item.textContent = text;
    if (index === view.current - 1) item.classList.add("current");
    return item;
  }));
  const current = moves.querySelector(".current");
  if (current) current.scrollIntoView({ block: "nearest" });
  $("undo").disabled = !answer.can_undo;
  $("download").disabled = false;
  showReplayButtons();
}

// -- play -----------------------------------------------------------------------------------

async function newGame() {
  stopWatching();
  const body = { ...setup(), opponent: $("opponent").value, seat: $("seat").value };
  render(await api("/api/new", body));
}

async function click(event) {
  const target = event.target.closest("[data-cell]");
  const answer = state.answer;
  if (!target || !answer || answer.kind !== "play" || state.pending) return;
  const cell = Number.parseInt(target.dataset.cell, 10);
  await attempt(async () => render(await api("/api/move", { session: answer.session, cell })));
}

async function undo() {
  render(await api("/api/undo", { session: state.answer.session }));
}

// -- watch ----------------------------------------------------------------------------------

function delay() {
  return Number.parseInt($("speed").value, 10);
}

function stopWatching() {
  state.watching = false;
  clearTimeout(state.timer);
  $("watch-pause").disabled = true;
  $("watch-pause").textContent = "Pause";
}

async function startWatching() {
  stopWatching();
  const body = { ...setup(), first: $("watch-first").value, second: $("watch-second").value };
  render(await api("/api/watch", body));
  resumeWatching();
}

function resumeWatching() {
  state.watching = true;
  $("watch-pause").disabled = false;
  $("watch-pause").textContent = "Pause";
  state.timer = setTimeout(watchStep, delay());
}

async function watchStep() {
  const answer = state.answer;
  if (!state.watching || !answer || answer.kind !== "watch") return;
  if (answer.view.over) {
    stopWatching();
    return;
  }
  try {
    render(await api("/api/step", { session: answer.session }));
  } catch (error) {
    showError(error.message);
    finished();
    stopWatching();
    return;
  }
  finished();
  if (state.answer.view.over) stopWatching();
  else if (state.watching) state.timer = setTimeout(watchStep, delay());
}

function pauseOrResume() {
  if (state.watching) {
    stopWatching();
    $("watch-pause").disabled = false;
    $("watch-pause").textContent = "Resume";
  } else {
    resumeWatching();
  }
}

// -- replay ---------------------------------------------------------------------------------

async function openRecord() {
  const file = $("record-file").files[0];
  if (!file) return;
  const text = await file.text();
  const answer = await api("/api/replay", { text });
  fillSelect($("record-game"), answer.games.map((_, index) => String(index)));
  $("record-game").querySelectorAll("option").forEach((option, index) => {
    const game = answer.games[index];
    option.textContent = `Game ${game.number}: ${game.players.join(" vs ")} (${game.game}, ${game.result})`;
  });
  $("record-game").disabled = false;
  render(answer);
}

async function showPly(game, ply) {
  render(await api("/api/show", { session: state.answer.session, game, ply }));
}

function replayTarget(button) {
  const view = state.answer.view;
  const total = view.moves.length;
  const steps = { first: 0, back: view.current - 1, forward: view.current + 1, last: total };
  return Math.max(0, Math.min(total, steps[button]));
}

function showReplayButtons() {
  const answer = state.answer;
  const replaying = answer && answer.kind === "replay";
  const current = replaying ? answer.view.current : 0;
  const total = replaying ? answer.view.moves.length : 0;
  $("first").disabled = $("back").disabled = !replaying || current === 0;
  $("forward").disabled = $("last").disabled = !replaying || current === total;
  if (replaying) $("record-game").value = String(answer.shown_game);
}

// -- download -------------------------------------------------------------------------------

async function download() {
  const data = await api("/api/record", { session: state.answer.session });
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([data.record + "\n"], { type: "application/json" }));
  link.download = data.filename;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(link.href);
}

// -- start ----------------------------------------------------------------------------------

function chooseMode(mode) {
  state.mode = mode;
  for (const tab of document.querySelectorAll(".tab")) {
    tab.setAttribute("aria-selected", String(tab.dataset.mode === mode));
  }
  for (const panel of document.querySelectorAll("fieldset.mode")) {
    panel.hidden = panel.dataset.mode !== mode;
  }
  $("setup").hidden = mode === "replay";
  if (mode !== "watch") stopWatching();
}

function wire() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => chooseMode(tab.dataset.mode));
  }
  $("game").addEventListener("change", showGameChoices);
  $("new").addEventListener("click", () => attempt(newGame));
  $("undo").addEventListener("click", () => attempt(undo));
  $("board").addEventListener("click", click);
  $("watch-start").addEventListener("click", () => attempt(startWatching));
  $("watch-pause").addEventListener("click", pauseOrResume);
  $("speed").addEventListener("input", () => {
    $("speed-text").textContent = `${(delay() / 1000).toFixed(1)} s`;
  });
  $("record-file").addEventListener("change", () => attempt(openRecord));
  $("record-game").addEventListener("change", () => attempt(
    () => showPly(Number.parseInt($("record-game").value, 10), 0)));
  for (const button of ["first", "back", "forward", "last"]) {
    $(button).addEventListener("click", () => attempt(
      () => showPly(state.answer.shown_game, replayTarget(button))));
  }
  $("download").addEventListener("click", () => attempt(download));
}

async function start() {
  wire();
  await attempt(async () => {
    state.games = (await api("/api/games")).games;
    fillSelect($("game"), state.games.map((game) => game.name));
    for (const option of $("game").querySelectorAll("option")) {
      option.textContent = state.games.find((game) => game.name === option.value).title;
    }
    showGameChoices();
  });
  document.body.dataset.pending = state.pending ? "1" : "0";
}

start();
