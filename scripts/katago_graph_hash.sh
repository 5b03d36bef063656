#!/usr/bin/env bash
# KataGo's graph hashes (GraphHash::getGraphHashFromScratch) of move
# sequences, for tests/data/graph_hash/katago.txt: builds a small driver
# against the object files of a KataGo 1.17.2 build (Eigen backend, see
# the README's reference set-up) and runs it on the sequences file.
#
# Usage: scripts/katago_graph_hash.sh KATAGO_CPP_BUILD_DIR < sequences > hashes
# Each input line: SIZE RULES KOMI REP_BOUND MOVE...  (MOVE like B:C3, W:pass)
# Each output line: the input line, " =>", then the graph hash before the
# first move and after each move, as KataGo prints a Hash128.
set -euo pipefail
build="${1:?usage: $0 KATAGO_CPP_BUILD_DIR < sequences}"
objdir="$build/CMakeFiles/katago.dir"
src="$(cd "$build/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cat > "$work/driver.cpp" <<'CPP'
#include <iostream>
#include <sstream>
#include <string>
#include "game/board.h"
#include "game/boardhistory.h"
#include "game/graphhash.h"
#include "game/rules.h"
int main() {
  Board::initHash();
  std::string line;
  while(std::getline(std::cin, line)) {
    if(line.empty() || line[0] == '#')
      continue;
    std::istringstream in(line);
    int size, repBound;
    std::string rulesName;
    float komi;
    in >> size >> rulesName >> komi >> repBound;
    Rules rules = Rules::parseRules(rulesName);
    rules.komi = komi;
    Board board(size, size);
    Player pla = P_BLACK;
    BoardHistory hist(board, pla, rules, 0, false);
    std::cout << line << " =>";
    std::cout << " " << GraphHash::getGraphHashFromScratch(hist, pla, repBound, 0.5).toString();
    std::string tok;
    while(in >> tok) {
      Player mover = tok[0] == 'B' ? P_BLACK : P_WHITE;
      Loc loc = Location::ofString(tok.substr(2), board);
      if(!hist.makeBoardMoveTolerant(board, loc, mover)) {
        std::cerr << "illegal move " << tok << " in: " << line << std::endl;
        return 1;
      }
      pla = getOpp(mover);
      std::cout << " " << GraphHash::getGraphHashFromScratch(hist, pla, repBound, 0.5).toString();
    }
    std::cout << std::endl;
  }
  return 0;
}
CPP
objs=$(find "$objdir/core" "$objdir/game" -name '*.o')
c++ -std=c++17 -O2 -mavx2 -mfma -I"$src" -DNDEBUG "$work/driver.cpp" $objs \
  -lzip -lz -lpthread -o "$work/driver"
"$work/driver"
