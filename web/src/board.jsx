// The board: Shudan's Goban, plus the test hooks it has no props for.
// After each render every vertex element gets `data-vertex` (GTP),
// `data-sign` (1 / -1 / 0, what the board shows there) and, for a top
// move of the analysis, `data-testid="top-move"`. Shudan's vertex element
// is the one that takes the click, so the hooks sit where a click plays.

import { useLayoutEffect, useRef } from "preact/hooks";
import { Goban } from "@sabaki/shudan";
import { columnName, toGtp } from "./go.js";

export function Board({ signMap, stones, vertexSize, topMoves, ...props }) {
  const ref = useRef(null);
  const size = signMap.length;

  useLayoutEffect(() => {
    const root = ref.current;
    if (!root) return;
    for (const el of root.querySelectorAll(".shudan-vertex")) {
      const x = Number(el.dataset.x);
      const y = Number(el.dataset.y);
      const gtp = toGtp([x, y], size);
      el.setAttribute("data-vertex", gtp);
      el.setAttribute("data-sign", String(stones[y]?.[x] ?? 0));
      if (topMoves.has(gtp)) el.setAttribute("data-testid", "top-move");
      else el.removeAttribute("data-testid");
    }
  });

  return (
    <div class="board" ref={ref}>
      <Goban
        vertexSize={vertexSize}
        signMap={signMap}
        showCoordinates
        coordX={columnName}
        fuzzyStonePlacement={false}
        animateStonePlacement={false}
        {...props}
      />
    </div>
  );
}
