"""A KataGo analysis query's position as an engine_go.Position."""

import engine_go


def position_of(query) -> engine_go.Position:
    moves = [tuple(m) for m in query.get("moves", [])]
    turns = query.get("analyzeTurns")
    if turns:
        moves = moves[: turns[0]]
    return engine_go.Position(
        size=(query["boardXSize"], query["boardYSize"]),
        moves=moves,
        rules=query["rules"],
        komi=float(query["komi"]),
        setup=[tuple(s) for s in query.get("initialStones", [])],
        to_play=query.get("initialPlayer"),
    )


def uses_history(query) -> bool:
    return query.get("overrideSettings", {}).get("ignorePreRootHistory") is False
