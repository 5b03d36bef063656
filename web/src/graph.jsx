// Win rate (Black's, 0–100 %) and score lead (Black's, scaled to the
// largest lead seen) over the game, as one SVG. A click goes to the move
// under it. `evals[i]` is the evaluation after i moves, or undefined.
// `mistakes` (the review's) are marked at the positions after them.

const W = 600;
const H = 120;

export function Graph({ evals, count, cursor, onSelect, mistakes = [] }) {
  const n = Math.max(count, 1);
  const x = (i) => (i / n) * W;
  const plotted = [];
  for (let i = 0; i <= count; i++) if (evals[i]) plotted.push(i);
  const maxLead = Math.max(5, ...plotted.map((i) => Math.abs(evals[i].scoreLead)));
  const line = (value) =>
    plotted.map((i, k) => `${k ? "L" : "M"}${x(i).toFixed(1)},${value(evals[i]).toFixed(1)}`).join("");
  const winrate = line((e) => H - e.winrate * H);
  const lead = line((e) => H / 2 - (e.scoreLead / maxLead) * (H / 2));

  const click = (e) => {
    const box = e.currentTarget.getBoundingClientRect();
    const i = Math.round(((e.clientX - box.left) / box.width) * n);
    onSelect(Math.max(0, Math.min(count, i)));
  };

  const at = evals[cursor];
  return (
    <figure class="graph">
      <svg
        data-testid="winrate-graph"
        data-points={plotted.length}
        viewBox={`0 0 ${W} ${H}`}
        preserveAspectRatio="none"
        role="img"
        aria-label="Black's win rate and score lead over the game; click to go to a move"
        onClick={click}
      >
        <rect width={W} height={H} class="graph-bg" />
        <line x1="0" y1={H / 2} x2={W} y2={H / 2} class="graph-mid" />
        <path d={lead} class="graph-lead" vector-effect="non-scaling-stroke" />
        <path d={winrate} class="graph-winrate" vector-effect="non-scaling-stroke" />
        {mistakes.map((i) => (
          // A reviewed mistake: a mark at the position after it.
          <line
            key={i}
            x1={x(i)}
            y1="0"
            x2={x(i)}
            y2={H}
            class="graph-mistake"
            data-testid="mistake-marker"
            data-move={i}
            vector-effect="non-scaling-stroke"
          />
        ))}
        <line x1={x(cursor)} y1="0" x2={x(cursor)} y2={H} class="graph-cursor" vector-effect="non-scaling-stroke" />
      </svg>
      <figcaption>
        <span class="key-winrate">Black win rate</span>{" "}
        <span class="key-lead">score lead (±{maxLead.toFixed(0)})</span>
        {at && (
          <span>
            {" "}
            · move {cursor}: {(at.winrate * 100).toFixed(1)} %, {formatLead(at.scoreLead)}
          </span>
        )}
      </figcaption>
    </figure>
  );
}

/** "B+3.5" / "W+0.5" from Black's score lead. */
export function formatLead(lead) {
  return `${lead >= 0 ? "B" : "W"}+${Math.abs(lead).toFixed(1)}`;
}
