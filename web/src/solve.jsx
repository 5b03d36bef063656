// The "Solve this corner" panel: the button, then the tsumego answer that
// tsumego.js made of the server's response.

/** A move or line to show on the board while hovered (or after a tap). */
function LineButton({ move, line, onLine, testid, children }) {
  const show = () => onLine({ move, pv: line });
  return (
    <button class="link" data-testid={testid} onMouseEnter={show} onMouseLeave={() => onLine(null)} onClick={show}>
      {children}
    </button>
  );
}

/**
 * "Solve this corner": the button, then the answer (the correct first
 * moves, each group's status, the refutation of each wrong first move;
 * hovering or tapping a move or line shows it on the board) or the error.
 * `solve` is the app's solve of the position on screen, or null.
 */
export function SolvePanel({ solve, canStart, onStart, onLine }) {
  const running = solve?.status === "running";
  const sol = solve?.status === "done" ? solve.solution : null;
  return (
    <section class="solve">
      <div class="buttons">
        <button onClick={onStart} disabled={!canStart || running} data-testid="solve-start">Solve this corner</button>
      </div>
      {solve && (
        <div class="solve-result" data-testid="solve-status" data-status={solve.status} aria-live="polite">
          {running && <p>Solving…</p>}
          {solve.status === "error" && <p class="message">{solve.error}</p>}
          {sol && (
            <>
              <p>{sol.summary}</p>
              <ul class="solve-groups">
                {sol.groups.map((g, i) => (
                  <li key={i} data-testid="solve-group" data-group-status={g.status}>{g.text}</li>
                ))}
              </ul>
              {sol.winning.length > 0 && (
                <p class="solve-lines">
                  Correct:{" "}
                  {sol.winning.map((m) => (
                    <LineButton key={m} move={m} line={[m]} onLine={onLine} testid="solve-winning">{m}</LineButton>
                  ))}
                </p>
              )}
              {sol.refutations.length > 0 && (
                <ul class="solve-refutations">
                  {sol.refutations.map((r) => (
                    <li key={r.move} data-testid="solve-refutation" data-move={r.move}>
                      <LineButton move={r.move} line={r.line} onLine={onLine}>
                        Wrong: {r.move} — {r.line.join(" ")}
                      </LineButton>
                    </li>
                  ))}
                </ul>
              )}
            </>
          )}
        </div>
      )}
    </section>
  );
}
