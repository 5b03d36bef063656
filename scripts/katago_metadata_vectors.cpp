// Reference vectors for engine's SGF metadata inputs (src/nn/metadata.rs),
// printed by KataGo 1.17.2's own SGFMetadata. Built and run by
// scripts/katago_metadata_vectors.sh against a KataGo build's objects.
//
//   katago_metadata_vectors PROFILE...
//
// For every profile name: "error PROFILE" when getProfile refuses it, else
// for each player to move and board area (361, 169, 81, 117) one line
// "row PROFILE PLAYER AREA v0 ... v191" (%.9g), and per player one line
// "hash PROFILE PLAYER HASH" (getHash's Hash128 as toString prints it).
#include <iostream>

#include "../core/global.h"
#include "../neuralnet/sgfmetadata.h"

using namespace std;

int main(int argc, const char* const* argv) {
  for(int a = 1; a < argc; a++) {
    string name = argv[a];
    SGFMetadata meta;
    try {
      meta = SGFMetadata::getProfile(name);
    }
    catch(const StringError&) {
      cout << "error " << name << "\n";
      continue;
    }
    if(!meta.initialized) {
      cout << "none " << name << "\n";
      continue;
    }
    for(Player pla: {P_BLACK, P_WHITE}) {
      const char* plaName = pla == P_BLACK ? "B" : "W";
      for(int area: {361, 169, 81, 117}) {
        float row[SGFMetadata::METADATA_INPUT_NUM_CHANNELS];
        SGFMetadata::fillMetadataRow(&meta, row, pla, area);
        cout << "row " << name << " " << plaName << " " << area;
        for(int i = 0; i < SGFMetadata::METADATA_INPUT_NUM_CHANNELS; i++)
          cout << " " << Global::strprintf("%.9g", row[i]);
        cout << "\n";
      }
      cout << "hash " << name << " " << plaName << " " << meta.getHash(pla).toString() << "\n";
    }
  }
  return 0;
}
