// Reference vectors for engine's pattern bonus table (src/search/pattern_bonus.rs),
// printed by KataGo 1.17.2's own PatternBonusTable. Built and run by
// scripts/katago_pattern_bonus_vectors.sh against a KataGo build's objects.
//
//   katago_pattern_bonus_vectors PENALTY LAMBDA MIN_TURN MAX_FILES NAMES SGF...
//
// For every SGF (main line): one "move" line per move with the hash of
// PatternBonusTable::getHash on the board before the move. Then the table
// avoidRepeatedSgfMoves builds from all the SGFs (the first named is the
// newest: the files' times are set so), and the table addBonusForGameMoves
// builds from the first SGF for each player.
#include <filesystem>
#include <iostream>
#include <map>

#include "../core/global.h"
#include "../core/logger.h"
#include "../dataio/sgf.h"
#include "../game/boardhistory.h"
#include "../search/patternbonustable.h"

using namespace std;

static void printTable(const PatternBonusTable& table) {
  map<Hash128, double> all;
  for(const auto& shard: table.entries)
    for(const auto& kv: shard)
      all[kv.first] = kv.second.utilityBonus;
  for(const auto& kv: all)
    cout << "entry " << kv.first.toString() << " " << Global::strprintf("%.17g", kv.second) << "\n";
}

int main(int argc, const char* const* argv) {
  if(argc < 7) {
    cerr << "usage: " << argv[0] << " PENALTY LAMBDA MIN_TURN MAX_FILES NAMES SGF..." << endl;
    return 2;
  }
  Board::initHash();
  double penalty = Global::stringToDouble(argv[1]);
  double lambda = Global::stringToDouble(argv[2]);
  int64_t minTurn = Global::stringToInt64(argv[3]);
  size_t maxFiles = (size_t)Global::stringToInt64(argv[4]);
  vector<string> names;
  if(string(argv[5]) != "-")
    names = Global::split(string(argv[5]), ',');
  vector<string> files;
  for(int i = 6; i < argc; i++)
    files.push_back(argv[i]);

  Rules rules = Rules::getTrompTaylorish();
  for(const string& file: files) {
    unique_ptr<CompactSgf> sgf = CompactSgf::loadFile(file);
    Board board;
    Player nextPla;
    BoardHistory hist;
    sgf->setupInitialBoardAndHist(sgf->getRulesOrFailAllowUnspecified(rules), board, nextPla, hist, false);
    PatternBonusTable table;
    cout << "game " << filesystem::path(file).filename().string() << "\n";
    for(size_t i = 0; i < sgf->moves.size(); i++) {
      Move m = sgf->moves[i];
      Hash128 h = table.getHash(m.pla, m.loc, board);
      cout << "move " << i << " " << PlayerIO::playerToString(m.pla) << " " << Location::toString(m.loc, board) << " "
           << h.toString() << "\n";
      if(!hist.makeBoardMoveTolerant(board, m.loc, m.pla))
        break;
    }
  }

  // Newest first: the first file gets the latest time.
  auto now = filesystem::file_time_type::clock::now();
  for(size_t i = 0; i < files.size(); i++)
    filesystem::last_write_time(files[i], now - chrono::hours(1 + (int)i));
  Logger logger(nullptr, false, false, false, false);
  {
    PatternBonusTable table;
    table.avoidRepeatedSgfMoves(files, penalty, lambda, minTurn, maxFiles, names, logger, "vectors");
    cout << "table avoidRepeatedSgfMoves\n";
    printTable(table);
  }
  for(Player pla: {P_BLACK, P_WHITE}) {
    unique_ptr<CompactSgf> sgf = CompactSgf::loadFile(files[0]);
    Board board;
    Player nextPla;
    BoardHistory hist;
    sgf->setupBoardAndHistTolerant(sgf->getRulesOrFailAllowUnspecified(rules), board, nextPla, hist, (int64_t)sgf->moves.size(), false, false);
    PatternBonusTable table;
    table.addBonusForGameMoves(hist, pla == P_WHITE ? -penalty : penalty, pla);
    cout << "table addBonusForGameMoves " << PlayerIO::playerToString(pla) << "\n";
    printTable(table);
  }
  return 0;
}
