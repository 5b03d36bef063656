// The page: a game against the engine with live analysis. State lives
// here; the engine is reached only through `Engine` (the WebSocket).

import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { Board } from "./board.jsx";
import { Graph, formatLead } from "./graph.jsx";
import { Engine, storeKey, storedKey } from "./engine.js";
import { fromGtp, handicapStones, other, play, positions, signOf, toGtp, toMove } from "./go.js";
import { parseSgf, writeSgf } from "./sgf.js";
import { NewGame, readSettings } from "./settings.jsx";
import { score } from "./score.js";
import { FINISHED, cancelReview, getReview, mistakesOf, reviewFits, startReview } from "./review.js";
import { humanMove } from "./human.js";
import { solutionOf, solveError, solveQuery } from "./tsumego.js";
import { SolvePanel } from "./solve.jsx";

/** Live analysis: how often partial results come, and its visit cap. */
const REPORT_EVERY = 0.3;
/** The review's polling interval. */
const REVIEW_POLL_MS = 500;
/** A human-like move's search (configs/gtp_human5k.toml's maxVisits). */
const HUMAN_VISITS = 40;

function newGameFrom(s) {
  const stones = handicapStones(s.size, s.handicap).map((v) => ["B", toGtp(v, s.size)]);
  return {
    size: s.size,
    komi: s.komi,
    rules: s.rules,
    handicap: stones.length,
    setup: stones,
    first: stones.length ? "W" : "B",
    moves: [],
    result: "",
  };
}

/** The part of a query that says which position it is. */
function positionQuery(game, count) {
  return {
    boardXSize: game.size,
    boardYSize: game.size,
    rules: game.rules,
    komi: game.komi,
    initialStones: game.setup,
    initialPlayer: game.first,
    moves: game.moves.slice(0, count),
    // Values from Black's side whatever the server's config says.
    overrideSettings: { reportAnalysisWinratesAs: "BLACK" },
  };
}

const evalOf = (msg) =>
  msg.rootInfo && { winrate: msg.rootInfo.winrate, scoreLead: msg.rootInfo.scoreLead };

/** Two passes in a row at the end. */
const twoPasses = (moves) =>
  moves.length >= 2 && moves.slice(-2).every(([, g]) => g === "pass");

function useViewport() {
  const [vp, setVp] = useState({ w: window.innerWidth, h: window.innerHeight });
  useEffect(() => {
    const on = () => setVp({ w: window.innerWidth, h: window.innerHeight });
    window.addEventListener("resize", on);
    return () => window.removeEventListener("resize", on);
  }, []);
  return vp;
}

export function App() {
  const initial = useMemo(() => readSettings(new URLSearchParams(location.search)), []);
  const [settings, setSettings] = useState(initial);
  const [game, setGame] = useState(() => newGameFrom(initial));
  const [cursor, setCursor] = useState(0);
  const [evals, setEvals] = useState([]);
  const [live, setLive] = useState(null); // { cursor, moveInfos, ownership }
  const [analysisOn, setAnalysisOn] = useState(true);
  const [ownershipOn, setOwnershipOn] = useState(true);
  // The board's heat: the top moves by visits, or the net's policy.
  const [policyHeat, setPolicyHeat] = useState(false);
  // Whether the server has a net that reads a human SL profile
  // (`query_models`); null until it answers.
  const [humanNet, setHumanNet] = useState(null);
  // The whole-game review: { game, id, job, error } (review.js).
  const [review, setReview] = useState(null);
  const [hover, setHover] = useState(null); // a moveInfo whose PV is shown
  // "Solve this corner": { game, cursor, id, status: "running" | "done" |
  // "error", solution, error } for the position it was asked about.
  const [solve, setSolve] = useState(null);
  const [thinking, setThinking] = useState(false);
  // Off after an SGF is opened, so the engine does not move in a game the
  // user only came to look at; the user's next move turns it on.
  const [engineOn, setEngineOn] = useState(true);
  const [ended, setEnded] = useState(null); // { result, dead: Set<gtp>, note }
  const [conn, setConn] = useState("connecting");
  const [keyInput, setKeyInput] = useState(storedKey());
  const [message, setMessage] = useState("");
  // A key's maxVisits, learnt from the server's refusal: queries ask no more.
  const [visitCap, setVisitCap] = useState(Infinity);
  const engineRef = useRef(null);
  const vp = useViewport();

  const userColor = settings.color;
  const all = useMemo(() => positions(game), [game]);
  const here = all[Math.min(cursor, all.length - 1)];
  const atEnd = cursor === game.moves.length;
  const turn = toMove(game, cursor);
  const over = !!game.result;

  // One connection for the page's life.
  useEffect(() => {
    const e = new Engine(setConn);
    engineRef.current = e;
    e.connect();
    return () => e.socket?.close();
  }, []);

  // The nets the server has: a human SL net makes profiles a strength.
  useEffect(() => {
    if (conn !== "open" || humanNet !== null) return;
    engineRef.current.action("query_models", (msg) => {
      if (msg.error) return;
      setHumanNet((msg.models ?? []).some((m) => m.usesHumanSLProfile));
    });
  }, [conn]);

  /** A refusal for maxVisits over the key's limit: remember the limit. */
  const capped = (msg) => {
    const limit = msg.field === "maxVisits" && /limit of (\d+)/.exec(msg.error);
    if (limit) setVisitCap(Number(limit[1]));
    return !!limit;
  };

  const recordEval = (count, msg) => {
    const ev = evalOf(msg);
    if (ev) setEvals((old) => {
      const next = old.slice();
      next[count] = ev;
      return next;
    });
  };

  // The engine's move: the best move of a query at the strength's visits.
  useEffect(() => {
    if (conn !== "open" || !engineOn || over || !atEnd || turn === userColor || twoPasses(game.moves)) return;
    const engine = engineRef.current;
    setThinking(true);
    const count = game.moves.length;
    const profile = humanNet && settings.profile;
    const query = { ...positionQuery(game, count), maxVisits: Math.min(settings.visits, visitCap) };
    if (profile) {
      // Human-like play as configs/gtp_human5k.toml (KataGo's
      // gtp_human5k_example.cfg): a small search, the move drawn from the
      // human policy of the profile; the search decides when to pass.
      query.maxVisits = Math.min(HUMAN_VISITS, visitCap);
      query.includePolicy = true;
      query.overrideSettings = { ...query.overrideSettings, humanSLProfile: profile, ignorePreRootHistory: false };
    }
    const id = engine.analyze(query, (msg) => {
      if (msg.error) {
        setThinking(false);
        if (!msg.closed && !capped(msg)) setMessage(`engine: ${msg.error}`);
        return;
      }
      recordEval(count, msg);
      const best = [...(msg.moveInfos ?? [])].sort((a, b) => a.order - b.order)[0];
      const move = profile ? humanMove(msg, game.size, best) : best ? best.move : "pass";
      setThinking(false);
      setGame((g) => (g.moves.length === count ? { ...g, moves: [...g.moves, [turn, move]] } : g));
      setCursor(count + 1);
    });
    return () => {
      engine.terminate(id);
      setThinking(false);
    };
  }, [conn, engineOn, game, atEnd, turn, userColor, over, visitCap, humanNet]);

  // Live analysis of the position on screen, until it changes. A search
  // that already finished is not run again when only the connection came
  // back (the server closes idle sockets).
  const liveDone = useRef(null);
  useEffect(() => {
    const cap = Math.min(settings.analysisVisits, visitCap);
    const done = liveDone.current;
    if (done && done.game === game && done.cursor === cursor && done.cap === cap && analysisOn) return;
    liveDone.current = null;
    setLive(null);
    setHover(null);
    if (conn !== "open" || !analysisOn || thinking || (atEnd && turn !== userColor && !over)) return;
    const engine = engineRef.current;
    const count = cursor;
    const id = engine.analyze(
      {
        ...positionQuery(game, count),
        maxVisits: cap,
        reportDuringSearchEvery: REPORT_EVERY,
        includeOwnership: true,
        includePolicy: true,
      },
      (msg) => {
        if (msg.error) {
          if (!msg.closed && !capped(msg)) setMessage(`analysis: ${msg.error}`);
          return;
        }
        recordEval(count, msg);
        setLive({ cursor: count, moveInfos: msg.moveInfos ?? [], ownership: msg.ownership, policy: msg.policy });
        if (!msg.isDuringSearch) liveDone.current = { game, cursor: count, cap };
      },
    );
    return () => engine.terminate(id);
  }, [conn, game, cursor, analysisOn, thinking, over, visitCap]);

  // The end of a game by two passes: score it from the engine's ownership.
  useEffect(() => {
    if (conn !== "open" || !twoPasses(game.moves) || game.result) return;
    const engine = engineRef.current;
    const count = game.moves.length;
    const id = engine.analyze(
      {
        ...positionQuery(game, count),
        maxVisits: Math.min(Math.max(settings.visits, 100), visitCap),
        includeOwnership: true,
      },
      (msg) => {
        if (msg.error) return;
        const s = score(game, all[count], msg);
        setEnded({ dead: s.dead, note: s.note });
        setGame((g) => (g.moves.length === count ? { ...g, result: s.result } : g));
      },
    );
    return () => engine.terminate(id);
  }, [conn, game, visitCap]);

  // The solve of another position stops (its answer would not fit).
  const solveHere = solve && solve.game === game && solve.cursor === cursor ? solve : null;
  useEffect(() => {
    if (solve && !solveHere && solve.status === "running") engineRef.current?.terminate(solve.id);
  }, [game, cursor]);

  const solveCorner = () => {
    const engine = engineRef.current;
    if (solveHere?.status === "running") return;
    const g = game;
    const count = cursor;
    const side = toMove(g, count);
    const fits = (s) => s && s.game === g && s.cursor === count;
    const id = engine.analyze(solveQuery(positionQuery(g, count), visitCap), (msg) => {
      if (msg.error) {
        capped(msg);
        setSolve((s) => (fits(s) ? { ...s, status: "error", error: solveError(msg) } : s));
        return;
      }
      if (msg.isDuringSearch) return;
      const solution = solutionOf(msg, side);
      setSolve((s) =>
        fits(s)
          ? solution
            ? { ...s, status: "done", solution }
            : { ...s, status: "error", error: "This server's answer has no tsumego result." }
          : s,
      );
    });
    setSolve({ game: g, cursor: count, id, status: "running" });
  };

  // The position rendered last, for handlers that outlive a render (the
  // keydown listener below): an effect re-registers only after the browser
  // has painted, so a closure can hold the position before the one shown.
  const shownAt = useRef(null);
  shownAt.current = { cursor, length: game.moves.length };
  const goTo = (i) => setCursor(Math.max(0, Math.min(shownAt.current.length, i)));

  // The review: polled until it ends; its values fill the graph's gaps.
  useEffect(() => {
    if (!review?.id || FINISHED.has(review.job.status)) return;
    const id = review.id;
    const t = setTimeout(async () => {
      try {
        const job = await getReview(id);
        setReview((r) => (r && r.id === id ? { ...r, job } : r));
        if (job.status === "done" && reviewFits(review, game)) {
          setEvals((old) => {
            const next = old.slice();
            for (const m of job.moves ?? []) next[m.turn + 1] ??= { winrate: m.winrate, scoreLead: m.scoreLead };
            return next;
          });
        }
      } catch (e) {
        setReview((r) => (r && r.id === id ? { ...r, error: e.message, job: { ...r.job, status: "failed" } } : r));
      }
    }, REVIEW_POLL_MS);
    return () => clearTimeout(t);
  }, [review]);

  // A review of moves the game no longer holds goes (and stops).
  useEffect(() => {
    if (!review || reviewFits(review, game)) return;
    if (review.id && !FINISHED.has(review.job.status)) cancelReview(review.id).catch(() => {});
    setReview(null);
  }, [game]);

  const reviewGame = async () => {
    const g = game;
    setReview({ game: g, id: null, job: { status: "starting" } });
    try {
      const job = await startReview(g);
      setReview({ game: g, id: job.id, job });
    } catch (e) {
      setReview({ game: g, id: null, job: { status: "failed" }, error: e.message });
    }
  };

  const stopReview = async () => {
    const id = review?.id;
    if (!id) return;
    try {
      const job = await cancelReview(id);
      setReview((r) => (r && r.id === id ? { ...r, job } : r));
    } catch (e) {
      setReview((r) => (r && r.id === id ? { ...r, error: e.message } : r));
    }
  };

  const reviewRunning = !!review && !FINISHED.has(review.job.status);
  const mistakes = review?.job.status === "done" ? mistakesOf(review.job) : [];

  // Keyboard: arrows walk through the game (not while typing in a field).
  // It reads the position on screen through `shownAt`, not its closure.
  useEffect(() => {
    const on = (e) => {
      if (e.target.closest?.("input, select, textarea")) return;
      const { cursor: at, length } = shownAt.current;
      const step = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -10, ArrowDown: 10 }[e.key];
      const to = step ? at + step : e.key === "Home" ? 0 : e.key === "End" ? length : null;
      if (to === null) return;
      goTo(to);
      e.preventDefault();
    };
    window.addEventListener("keydown", on);
    return () => window.removeEventListener("keydown", on);
  }, []);

  /** The user's move at `gtp` (or "pass"); from an earlier move, a new line. */
  const userMove = (gtp) => {
    if (over || thinking || turn !== userColor) return;
    const v = fromGtp(gtp, game.size);
    if (v && !play(here.board, v, signOf(turn), all[cursor - 1]?.board)) {
      setMessage(`${gtp} is not a legal move`);
      return;
    }
    setMessage("");
    setEnded(null);
    setEngineOn(true);
    setEvals((old) => old.slice(0, cursor + 1));
    setGame((g) => ({ ...g, moves: [...g.moves.slice(0, cursor), [turn, gtp]] }));
    setCursor(cursor + 1);
  };

  const undo = () => {
    // Back to the user's previous turn: the engine's answer and the
    // user's move go.
    let n = game.moves.length;
    if (n && game.moves[n - 1][0] !== userColor) n--;
    if (n && game.moves[n - 1][0] === userColor) n--;
    setEnded(null);
    setGame((g) => ({ ...g, moves: g.moves.slice(0, n), result: "" }));
    setEvals((old) => old.slice(0, n + 1));
    setCursor(n);
  };

  const resign = () => {
    if (over) return;
    setGame((g) => ({ ...g, result: `${other(userColor)}+R` }));
    setEnded({ dead: new Set(), note: "You resigned." });
  };

  const start = (s) => {
    setSettings(s);
    setEngineOn(true);
    setGame(newGameFrom(s));
    setCursor(0);
    setEvals([]);
    setEnded(null);
    setMessage("");
  };

  const openSgf = async (file) => {
    try {
      const g = parseSgf(await file.text());
      setGame(g);
      setEngineOn(false);
      // The user continues as the side to move at the end.
      setSettings((s) => ({ ...s, size: g.size, komi: g.komi, rules: g.rules, color: toMove(g, g.moves.length) }));
      setCursor(g.moves.length);
      setEvals([]);
      setEnded(null);
      setMessage(`Opened ${file.name}: ${g.moves.length} moves.`);
    } catch (e) {
      setMessage(`Could not open ${file.name}: ${e.message}`);
    }
  };

  const saveSgf = () => {
    const names = userColor === "B" ? { black: "You", white: "engine" } : { black: "engine", white: "You" };
    const blob = new Blob([writeSgf({ ...game, ...names })], { type: "application/x-go-sgf" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "game.sgf";
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };

  // Drag and drop of an SGF file anywhere on the page.
  useEffect(() => {
    const over = (e) => e.preventDefault();
    const drop = (e) => {
      e.preventDefault();
      const file = e.dataTransfer?.files?.[0];
      if (file) openSgf(file);
    };
    window.addEventListener("dragover", over);
    window.addEventListener("drop", drop);
    return () => {
      window.removeEventListener("dragover", over);
      window.removeEventListener("drop", drop);
    };
  }, []);

  // What the board shows.
  const size = game.size;
  const shown = live && live.cursor === cursor ? live : null;
  const top = (shown?.moveInfos ?? [])
    .filter((m) => m.move !== "pass")
    .sort((a, b) => a.order - b.order)
    .slice(0, 8);
  const maxVisits = Math.max(1, ...top.map((m) => m.visits));
  let signMap = here.board;
  const markerMap = here.board.map((row) => row.map(() => null));
  const heatMap = here.board.map((row) => row.map(() => null));
  if (hover) {
    // The principal variation: its stones numbered, captures played out.
    let color = turn;
    let prev = null;
    (hover.pv ?? []).slice(0, 12).forEach((gtp, i) => {
      const v = fromGtp(gtp, size);
      const r = v && play(signMap, v, signOf(color), prev);
      if (r) {
        prev = signMap;
        signMap = r.board;
        markerMap[v[1]][v[0]] = { type: "label", label: String(i + 1) };
      }
      color = other(color);
    });
  } else if (policyHeat && shown?.policy) {
    // The net's policy over the board (the pass entry last, -1 on
    // illegal points): heat by share of the largest, labels on the top 5.
    const p = shown.policy.slice(0, size * size);
    const maxP = Math.max(1e-9, ...p);
    const labelled = new Set(
      p.map((v, i) => [v, i]).sort((a, b) => b[0] - a[0]).slice(0, 5).map(([, i]) => i),
    );
    p.forEach((v, i) => {
      const strength = Math.round((v / maxP) * 9);
      if (v <= 0 || strength < 1) return;
      heatMap[Math.floor(i / size)][i % size] = {
        strength,
        text: labelled.has(i) ? `${(v * 100).toFixed(v < 0.1 ? 1 : 0)}%` : undefined,
      };
    });
  } else {
    for (const m of top) {
      const v = fromGtp(m.move, size);
      if (!v) continue;
      heatMap[v[1]][v[0]] = {
        strength: Math.max(1, Math.round((m.visits / maxVisits) * 9)),
        text: `${(m.winrate * 100).toFixed(0)}%\n${formatLead(m.scoreLead)}\n${m.visits}`,
      };
    }
  }
  const last = cursor ? fromGtp(game.moves[cursor - 1][1], size) : null;
  if (last && !hover) markerMap[last[1]][last[0]] = { type: "point" };
  // A reviewed mistake on screen: the move played (a triangle) and the
  // engine's choice there (a circle), before and after the move.
  if (!hover) {
    for (const m of mistakes) {
      if (cursor === m.turn + 1) {
        const v = fromGtp(m.move, size);
        if (v) markerMap[v[1]][v[0]] = { type: "triangle" };
      }
      if ((cursor === m.turn || cursor === m.turn + 1) && m.bestMove !== m.move) {
        const b = fromGtp(m.bestMove, size);
        if (b && !here.board[b[1]][b[0]]) markerMap[b[1]][b[0]] = { type: "circle" };
      }
    }
  }
  // The solve's correct first moves: squares (the refutations are lines
  // to hover in the panel).
  if (!hover && solveHere?.status === "done") {
    for (const gtp of solveHere.solution.winning) {
      const v = fromGtp(gtp, size);
      if (v && !here.board[v[1]][v[0]]) markerMap[v[1]][v[0]] = { type: "square" };
    }
  }
  const dead = ended && atEnd ? ended.dead : new Set();
  for (const gtp of dead) {
    const v = fromGtp(gtp, size);
    if (v) markerMap[v[1]][v[0]] = { type: "cross" };
  }
  const paintMap =
    ownershipOn && shown?.ownership && !hover
      ? // Empty points and stones that look dead: a live stone's own
        // colour under it only hides it.
        here.board.map((row, y) =>
          row.map((stone, x) => {
            const o = shown.ownership[y * size + x] ?? 0;
            return stone === 0 || Math.sign(o) === -stone ? o : 0;
          }),
        )
      : null;
  const topSet = new Set(hover ? [] : top.map((m) => m.move));

  // Board size: the width left beside (desktop) or under (phone) the panel.
  const wide = vp.w >= 820;
  const room = wide ? Math.min(vp.w - 380, vp.h - 40) : Math.min(vp.w - 16, vp.h - 120);
  // Shudan's board is size + 2 vertices wide with coordinates, plus borders.
  const vertexSize = Math.max(8, Math.floor(room / (size + 2.5)));

  const vertexAt = (v) => toGtp(v, size);
  const topAt = (v) => top.find((m) => m.move === vertexAt(v));

  const status = (() => {
    if (conn === "needs-key") return "A key is needed.";
    if (conn === "closed") return "Disconnected from the server.";
    if (conn === "connecting") return "Connecting…";
    if (over) return `Game over: ${game.result}. ${ended?.note ?? ""}`;
    if (twoPasses(game.moves)) return "Both passed: scoring…";
    if (thinking) return "The engine is thinking…";
    if (!atEnd) return `Move ${cursor} of ${game.moves.length} (play here to start a new line).`;
    return turn === userColor ? `Your move (${turn === "B" ? "Black" : "White"}).` : "";
  })();

  return (
    <div class={wide ? "layout wide" : "layout"}>
      <main class="board-area">
        <Board
          signMap={signMap}
          stones={here.board}
          vertexSize={vertexSize}
          topMoves={topSet}
          markerMap={markerMap}
          heatMap={heatMap}
          paintMap={paintMap}
          dimmedVertices={[...dead].map((g) => fromGtp(g, size)).filter(Boolean)}
          onVertexClick={(_, v) => userMove(vertexAt(v))}
          onVertexMouseEnter={(_, v) => setHover(topAt(v) ?? null)}
          onVertexMouseLeave={() => setHover(null)}
        />
      </main>
      <aside class="panel">
        <header>
          <h1>engine</h1>
          <span class={`conn conn-${conn}`}>{conn}</span>
        </header>
        {conn === "needs-key" && (
          <form
            class="key"
            onSubmit={(e) => {
              e.preventDefault();
              storeKey(keyInput.trim());
              engineRef.current.connect();
            }}
          >
            <label>
              Key{" "}
              <input type="password" value={keyInput} onInput={(e) => setKeyInput(e.target.value)} autocomplete="off" />
            </label>
            <button type="submit">Connect</button>
            <small>Kept in this browser only (local storage).</small>
          </form>
        )}
        {conn === "closed" && (
          <button onClick={() => engineRef.current.connect()}>Reconnect</button>
        )}
        <p class="status" data-testid="status" aria-live="polite">
          {status}
        </p>
        {message && <p class="message">{message}</p>}
        <div class="buttons">
          <button onClick={() => userMove("pass")} disabled={over || thinking || turn !== userColor}>Pass</button>
          <button onClick={undo} disabled={!game.moves.length}>Undo</button>
          <button onClick={resign} disabled={over}>Resign</button>
          <button onClick={() => goTo(cursor - 1)} disabled={!cursor} aria-label="previous move">◀</button>
          <button onClick={() => goTo(cursor + 1)} disabled={atEnd} aria-label="next move">▶</button>
        </div>
        <form
          class="move-input"
          onSubmit={(e) => {
            e.preventDefault();
            const text = e.target.elements.move.value.trim().toUpperCase();
            if (text === "PASS" || fromGtp(text, size)) {
              userMove(text === "PASS" ? "pass" : toGtp(fromGtp(text, size), size));
              e.target.reset();
            } else setMessage(`${text || "(nothing)"} is not a point of this board`);
          }}
        >
          {/* Playing by keyboard: type a point, Enter. */}
          <input name="move" aria-label="Your move (e.g. D4 or pass)" placeholder="D4" autocomplete="off" size="6" />
          <button type="submit">Play</button>
        </form>
        <p class="captures">
          Move {cursor} · captures: Black {here.captures.B}, White {here.captures.W} · komi {game.komi} · {game.rules}
        </p>
        <Graph evals={evals} count={game.moves.length} cursor={cursor} onSelect={goTo} mistakes={mistakes.map((m) => m.turn + 1)} />
        <SolvePanel solve={solveHere} canStart={conn === "open"} onStart={solveCorner} onLine={setHover} />
        <ReviewPanel review={review} mistakes={mistakes} running={reviewRunning} canStart={game.moves.length > 0 && conn !== "needs-key"} onStart={reviewGame} onCancel={stopReview} goTo={goTo} />
        <div class="toggles">
          <label>
            <input type="checkbox" checked={analysisOn} onChange={(e) => setAnalysisOn(e.target.checked)} /> Analysis
          </label>
          <label>
            <input type="checkbox" checked={ownershipOn} onChange={(e) => setOwnershipOn(e.target.checked)} /> Ownership
          </label>
          <label>
            <input type="checkbox" checked={policyHeat} onChange={(e) => setPolicyHeat(e.target.checked)} data-testid="policy-heat" /> Policy heat
          </label>
        </div>
        {top.length > 0 && (
          <table class="top-moves">
            <thead>
              <tr><th>move</th><th>win %</th><th>lead</th><th>visits</th></tr>
            </thead>
            <tbody>
              {top.map((m) => (
                <tr
                  key={m.move}
                  onMouseEnter={() => setHover(m)}
                  onMouseLeave={() => setHover(null)}
                  // A tap (phones have no hover) shows the line; a touch
                  // browser's emulated mouseenter comes first, so no toggle.
                  onClick={() => setHover(m)}
                >
                  <td>{m.move}</td>
                  <td>{(m.winrate * 100).toFixed(1)}</td>
                  <td>{formatLead(m.scoreLead)}</td>
                  <td>{m.visits}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
        <NewGame settings={settings} onStart={start} humanNet={humanNet} />
        <div class="files">
          <label class="button">
            Open SGF
            <input
              type="file"
              accept=".sgf,application/x-go-sgf"
              data-testid="sgf-open"
              onChange={(e) => e.target.files[0] && openSgf(e.target.files[0])}
            />
          </label>
          <button onClick={saveSgf} data-testid="sgf-save">Save SGF</button>
        </div>
        <p class="hint">Arrow keys: walk through the game. Drop an SGF file anywhere to open it. Hover a top move for its line.</p>
      </aside>
    </div>
  );
}

const REVIEW_STATUS = {
  starting: "Starting the review…",
  queued: "Review queued…",
  running: "Reviewing…",
  cancelled: "Review cancelled.",
  failed: "The review failed",
};

/** The review's button, progress and list of mistakes. */
function ReviewPanel({ review, mistakes, running, canStart, onStart, onCancel, goTo }) {
  const job = review?.job;
  const progress = job?.progress;
  let text = "";
  if (job?.status === "done") {
    text = mistakes.length
      ? `Review done: the ${mistakes.length} largest mistake${mistakes.length > 1 ? "s" : ""}.`
      : "Review done: no mistake found.";
  } else if (job) {
    text = REVIEW_STATUS[job.status] ?? job.status;
    if (progress && running) text += ` ${progress.done} of ${progress.total} positions`;
    if (review.error) text += `: ${review.error}`;
  }
  return (
    <section class="review">
      <div class="buttons">
        <button onClick={onStart} disabled={!canStart || running} data-testid="review-start">Review game</button>
        {running && <button onClick={onCancel} disabled={!review.id} data-testid="review-cancel">Cancel review</button>}
      </div>
      {job && (
        <p class="review-status" data-testid="review-status" data-status={job.status}>
          {text}
          {running && progress && <progress max={progress.total} value={progress.done} />}
        </p>
      )}
      {mistakes.length > 0 && (
        <ol class="mistakes">
          {mistakes.map((m) => (
            <li key={m.turn} data-testid="mistake" data-turn={m.turn} data-move={m.move} data-best={m.bestMove}>
              <button class="link" onClick={() => goTo(m.turn + 1)}>
                Move {m.turn + 1} ({m.player} {m.move}): −{Math.max(0, m.pointsLost).toFixed(1)} points,
                −{(Math.max(0, m.winrateLost) * 100).toFixed(0)} % · better {m.bestMove}
              </button>
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}
