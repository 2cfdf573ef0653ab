//===- MakeSeeds.cpp - Seed corpus for the .wfb reader fuzzer ---------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Writes small valid binaries that together use every record kind, so the
// fuzzer starts from inputs that reach deep into the reader. Usage:
//   wfb-fuzz-seeds <output directory>
//
//===----------------------------------------------------------------------===//

#include "weft/Binary/File.h"

#include <cstdio>

using namespace weft::binary;
namespace wt = weft::machine;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: wfb-fuzz-seeds <directory>\n");
    return 2;
  }
  std::string dir = argv[1];
  Program empty;

  Program p;
  p.target.width = 4;
  p.target.height = 2;
  p.target.memoryBytes = 4096;
  p.name = "seed";
  p.layers = {"l0"};
  CodeImage img;
  img.routes = {{1, wt::dirBit(wt::Dir::West), wt::dirBit(wt::Dir::Ramp), {}},
                {2, wt::dirBit(wt::Dir::Ramp), wt::dirBit(wt::Dir::East), {}}};
  img.segments = {{0, {0x0001, 0x000f, 0, 0}, "", ""},
                  {700, {1, 2, 3, 4}, "", ""},
                  {800, {9}, "s", "tensor<1xi16>"}};
  img.active = 2;
  img.blocked = uint64_t(1) << 40;
  img.symbols = {{SymbolKind::Dsd, "d", 700, 4, 0, 0},
                 {SymbolKind::Task, "t", 4, 1, 0, 1},
                 {SymbolKind::Label, "l", 4, 0, 0, 0}};
  p.images = {img, img};
  p.images[1].active = 0;
  Group g;
  g.name = "g";
  g.width = 3;
  g.height = 2;
  g.layer = 0;
  g.params = {{5, 1, -2, 3}};
  g.perPe = {{1000, 1, std::vector<uint16_t>(6, 7), "w", "tensor<2x3x1xi16>"}};
  Group h;
  h.name = "h";
  h.image = 1;
  h.x = 3;
  h.single = true;
  p.groups = {g, h};
  IoStream s;
  s.name = "x";
  s.endRow = 2;
  s.color = 1;
  s.shape = {2, 3};
  IoStream o = s;
  o.name = "y";
  o.output = true;
  o.edge = wt::Dir::East;
  o.format = wt::PayloadFormat::Sparse16;
  o.dtype = wt::ElemType::I16;
  p.io = {s, o};

  // Feature-map streams (order byte 1): a [1, C, H, W] input on both rows
  // and a [1, C] output.
  Program f = p;
  IoStream fi = s;
  fi.name = "f";
  fi.order = IoOrder::FeatureMap;
  fi.shape = {1, 4, 3, 3};
  IoStream fo = o;
  fo.name = "g";
  fo.order = IoOrder::FeatureMap;
  fo.shape = {1, 6};
  f.io = {fi, fo};

  // Positioned routes (docs/architecture.md §4.4): a merge of the west
  // stream and the CE's on color 2, and a segment tap with three positions
  // on color 1.
  Program q = p;
  wt::DirSet west = wt::dirBit(wt::Dir::West), east = wt::dirBit(wt::Dir::East),
             ramp = wt::dirBit(wt::Dir::Ramp);
  Route tap{1, west, wt::DirSet(east | ramp), {}},
      merge{2, wt::DirSet(west | ramp), east, {}};
  tap.positions = {{west, east, 10},
                   {west, wt::DirSet(east | ramp), 6},
                   {west, ramp, 20}};
  merge.positions = {{west, east, 12}, {ramp, east, 4}};
  q.images[0].routes = {tap, merge};

  std::string err;
  if (!writeFile(dir + "/empty.wfb", empty, &err) ||
      !writeFile(dir + "/sample.wfb", p, &err) ||
      !writeFile(dir + "/fmap.wfb", f, &err) ||
      !writeFile(dir + "/positions.wfb", q, &err)) {
    std::fprintf(stderr, "wfb-fuzz-seeds: %s\n", err.c_str());
    return 1;
  }
  return 0;
}
