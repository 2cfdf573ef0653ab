//===- SimBuilder.h - Build small binaries in C++ for simulator tests -----===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// A tiny assembler for unit tests: tasks as lists of machine instructions,
// DSD records and data at word addresses, routes; produces a CodeImage with
// the task table laid out as docs/architecture.md §6.4 describes.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_TEST_UNIT_SIMBUILDER_H
#define WEFT_TEST_UNIT_SIMBUILDER_H

#include "weft/Binary/Binary.h"
#include "weft/Machine/DSD.h"
#include "weft/Machine/ISA.h"

#include <cstring>
#include <map>
#include <vector>

namespace weft::test {

using namespace weft::machine;

inline Operand dsr(unsigned n) { return {OperandKind::Dsr, uint8_t(n)}; }
inline Operand ddsr(unsigned n) { return {OperandKind::Ddsr, uint8_t(n)}; }
inline Operand s0(unsigned n) { return {OperandKind::S0dsr, uint8_t(n)}; }
inline Operand s1(unsigned n) { return {OperandKind::S1dsr, uint8_t(n)}; }
inline Operand gpr(unsigned n) { return {OperandKind::Gpr, uint8_t(n)}; }
inline Operand imm(SmallImm k) { return {OperandKind::Imm, uint8_t(k)}; }

/// DSR loads by record word address (must be a multiple of 4).
inline Instruction lds0(unsigned reg, unsigned addr) {
  return Instruction::immOp(Opcode::LDS0, uint8_t(reg), uint16_t(addr / 4));
}
inline Instruction lds1(unsigned reg, unsigned addr) {
  return Instruction::immOp(Opcode::LDS1, uint8_t(reg), uint16_t(addr / 4));
}
inline Instruction ldd(unsigned reg, unsigned addr) {
  return Instruction::immOp(Opcode::LDD, uint8_t(reg), uint16_t(addr / 4));
}
inline Instruction nopTerm() {
  return Instruction::ctl(Opcode::NOP, CtlMode::ImmColor, 0, true);
}

inline Dsd mem1d(unsigned base, unsigned len, int stride = 1) {
  Dsd d;
  d.kind = DsdKind::Mem1D;
  d.base = base;
  d.length = len;
  d.stride = stride;
  return d;
}
inline Dsd fabin(unsigned color, unsigned len,
                 PayloadFormat f = PayloadFormat::Dense32) {
  Dsd d;
  d.kind = DsdKind::FabricIn;
  d.color = uint8_t(color);
  d.length = len;
  d.format = f;
  return d;
}
inline Dsd fabout(unsigned color, unsigned len,
                  PayloadFormat f = PayloadFormat::Dense32) {
  Dsd d;
  d.kind = DsdKind::FabricOut;
  d.color = uint8_t(color);
  d.length = len;
  d.format = f;
  return d;
}

class ImageBuilder {
public:
  /// A data or local task at id, or a control task at index (control=true).
  void task(unsigned id, std::vector<Instruction> code, bool control = false,
            bool active = false, bool blocked = false) {
    unsigned entry = control ? Arch::kControlTableOffset + id
                             : Arch::kSlotsPerTaskEntry * id;
    unsigned room = control ? 1 : Arch::kSlotsPerTaskEntry;
    if (code.size() <= room) {
      place(entry, code);
    } else {
      // Fix up jumps relative to the body: targets given as offsets.
      unsigned body = nextCode;
      for (Instruction &i : code)
        if (i.opcode == Opcode::JMP || i.opcode == Opcode::BRT ||
            i.opcode == Opcode::BRF)
          i.target = uint16_t(i.target + body);
      place(entry, {Instruction::jump(Opcode::JMP, uint16_t(body))});
      place(body, code);
      nextCode = body + unsigned(code.size());
    }
    if (!control && active)
      img.active |= uint64_t(1) << id;
    if (!control && blocked)
      img.blocked |= uint64_t(1) << id;
  }
  /// Marks fabric color `c` as starting tasks (active at load, §6.2).
  void activeColor(unsigned c) { img.active |= uint64_t(1) << c; }
  void dsd(unsigned addr, const Dsd &d) { record(addr, d.encode()); }
  void xdsd(unsigned addr, const Xdsd &x) { record(addr, x.encode()); }
  void word(unsigned addr, uint16_t w) { words[addr] = w; }
  void f32(unsigned addr, float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    words[addr] = uint16_t(b);
    words[addr + 1] = uint16_t(b >> 16);
  }
  void route(unsigned color, std::initializer_list<Dir> in,
             std::initializer_list<Dir> out) {
    binary::Route r;
    r.color = uint8_t(color);
    for (Dir d : in)
      r.inputs |= dirBit(d);
    for (Dir d : out)
      r.outputs |= dirBit(d);
    img.routes.push_back(r);
  }
  /// One position of a positioned route (docs/architecture.md §4.4).
  struct Position {
    std::vector<Dir> in, out;
    uint32_t count;
  };
  /// A positioned route; its sets are the unions of the positions'.
  void route(unsigned color, const std::vector<Position> &positions) {
    binary::Route r;
    r.color = uint8_t(color);
    for (const Position &pos : positions) {
      binary::RoutePosition rp;
      for (Dir d : pos.in)
        rp.inputs |= dirBit(d);
      for (Dir d : pos.out)
        rp.outputs |= dirBit(d);
      rp.count = pos.count;
      r.inputs |= rp.inputs;
      r.outputs |= rp.outputs;
      r.positions.push_back(rp);
    }
    img.routes.push_back(r);
  }
  binary::CodeImage build() const {
    binary::CodeImage out = img;
    binary::Segment seg;
    int64_t prev = -2;
    for (auto &[a, w] : words) {
      if (int64_t(a) != prev + 1 && !seg.words.empty()) {
        out.segments.push_back(seg);
        seg = binary::Segment();
      }
      if (seg.words.empty())
        seg.address = a;
      seg.words.push_back(w);
      prev = a;
    }
    if (!seg.words.empty())
      out.segments.push_back(seg);
    return out;
  }

private:
  void place(unsigned slot, const std::vector<Instruction> &code) {
    for (const Instruction &i : code) {
      uint32_t b = i.encode();
      words[2 * slot] = uint16_t(b);
      words[2 * slot + 1] = uint16_t(b >> 16);
      ++slot;
    }
  }
  void record(unsigned addr, uint64_t v) {
    for (unsigned i = 0; i < 4; ++i)
      words[addr + i] = uint16_t(v >> (16 * i));
  }
  binary::CodeImage img;
  std::map<uint32_t, uint16_t> words;
  unsigned nextCode = Arch::kTaskTableSlots;
};

inline binary::IoStream stream(const std::string &name, bool output, Dir edge,
                               unsigned first, unsigned end, unsigned color,
                               std::vector<int64_t> shape,
                               ElemType t = ElemType::F32,
                               PayloadFormat f = PayloadFormat::Dense32) {
  binary::IoStream s;
  s.name = name;
  s.output = output;
  s.edge = edge;
  s.firstRow = first;
  s.endRow = end;
  s.color = uint8_t(color);
  s.shape = std::move(shape);
  s.dtype = t;
  s.format = f;
  return s;
}

inline binary::Group group(const std::string &name, unsigned image, unsigned x,
                           unsigned y, unsigned w = 1, unsigned h = 1) {
  binary::Group g;
  g.name = name;
  g.image = image;
  g.x = x;
  g.y = y;
  g.width = w;
  g.height = h;
  return g;
}

/// A 1 x 1 fabric whose one PE runs `b`'s image (no I/O streams).
inline binary::Program onePe(const ImageBuilder &b) {
  binary::Program p;
  p.target.width = 1;
  p.target.height = 1;
  p.images.push_back(b.build());
  p.groups.push_back(group("pe", 0, 0, 0));
  return p;
}

inline std::vector<uint8_t> f32Bytes(const std::vector<float> &v) {
  std::vector<uint8_t> b(v.size() * 4);
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}
inline std::vector<float> bytesF32(const std::vector<uint8_t> &b) {
  std::vector<float> v(b.size() / 4);
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

} // namespace weft::test

#endif // WEFT_TEST_UNIT_SIMBUILDER_H
