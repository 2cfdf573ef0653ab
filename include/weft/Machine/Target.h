//===- Target.h - The weft machine model ------------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The one description of the machine that the dialect verifiers, the passes,
// the binary emitter and the simulator all ask. docs/architecture.md is its
// prose twin; every number here is a parameter or a documented constant of the
// instruction encoding, never a constant scattered through the code.
//
// This library has no MLIR dependency so that the simulator can use it.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_MACHINE_TARGET_H
#define WEFT_MACHINE_TARGET_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::machine {

/// Router ports. The first four are links to neighbours (or to a host port on
/// the west and east edges); `Ramp` is the link to this PE's compute element
/// (on-ramp when used as an input, off-ramp when used as an output).
enum class Dir : uint8_t { North = 0, East = 1, South = 2, West = 3, Ramp = 4 };
constexpr unsigned kNumDirs = 5;

/// A set of router ports, one bit per `Dir`.
using DirSet = uint8_t;
constexpr DirSet dirBit(Dir d) { return DirSet(1u << unsigned(d)); }
constexpr DirSet kAllDirs = 0x1f;

/// Lower-case name of a port ("north", ..., "ramp").
const char *dirName(Dir d);
/// The port a wavelet leaving through `d` enters the neighbour by.
Dir opposite(Dir d);
/// Parses a port name; std::nullopt on anything else.
std::optional<Dir> parseDir(const std::string &name);

/// Fixed widths of the architecture: these come from the wavelet and
/// instruction encodings and cannot change without changing the encodings.
struct Arch {
  /// The wavelet's color field is 5 bits wide.
  static constexpr unsigned kColorBits = 5;
  static constexpr unsigned kFabricColors = 1u << kColorBits; // 32
  /// Task identifiers are 6 bits: 0..31 are fabric colors, 32..63 local colors.
  static constexpr unsigned kTaskIds = 64;
  static constexpr unsigned kFirstLocalColor = kFabricColors;
  /// Control wavelets select one of 64 control entry points by index[5:0].
  static constexpr unsigned kControlEntries = 64;
  static constexpr unsigned kNumGPRs = 16;
  static constexpr unsigned kNumDSRs = 12; // per kind: S0, S1, D
  static constexpr unsigned kNumXDSRs = 6;
  static constexpr unsigned kNumStrideRegs = 6;
  static constexpr unsigned kNumMicrothreads = 8;
  /// Memory addresses in DSDs are 15-bit counts of 16-bit words.
  static constexpr unsigned kAddressBits = 15;
  static constexpr unsigned kMaxAddressableWords = 1u << kAddressBits;
  /// Instructions are 20 bits, stored one per 32-bit slot (two words).
  static constexpr unsigned kInstructionBits = 20;
  static constexpr unsigned kWordsPerSlot = 2;
  /// DSD and XDSD records occupy 64 bits (four words) in memory, and DSR
  /// loads address them in 8-byte units with an 11-bit field, so they must
  /// lie in the first 16 KiB.
  static constexpr unsigned kWordsPerDescriptor = 4;
  static constexpr unsigned kDescriptorUnitBits = 11;
  /// Task table: data/local task entries at Base + 4 * id (64 ids), control
  /// entries at Base + 256 + index[5:0]. Both counted in instruction slots.
  static constexpr unsigned kSlotsPerTaskEntry = 4;
  static constexpr unsigned kControlTableOffset = kTaskIds * kSlotsPerTaskEntry;
  static constexpr unsigned kTaskTableSlots =
      kControlTableOffset + kControlEntries; // 320 slots = 1280 bytes
  /// Largest vector length a DSD length field can hold.
  static constexpr unsigned kMaxVectorLength = (1u << 15) - 1;
  /// A positioned route cycles through 2 to 4 positions, each held for 1 to
  /// 2^24 wavelets (docs/architecture.md §4.4).
  static constexpr unsigned kMinRoutePositions = 2;
  static constexpr unsigned kMaxRoutePositions = 4;
  static constexpr uint32_t kMaxPositionCount = uint32_t(1) << 24;
};

/// One position of a positioned route (docs/architecture.md §4.4): `count`
/// wavelets enter through a port of `inputs` and leave through every port of
/// `outputs`. Wide fields, so that values read from IR or a file are checked
/// before they are narrowed.
struct RoutePositionSpec {
  int64_t inputs = 0, outputs = 0, count = 0;
};

/// "[west, ramp]": a port set for messages.
std::string dirSetName(unsigned set);

/// Why `positions` are not a valid cycle for a route of port sets `inputs`
/// and `outputs`, as a phrase ("position 2 of 3 has count 0; counts are 1
/// to 16777216"); empty when they are: 2 to 4 positions, each with at least
/// one of the 5 ports on each side and a count of 1 to 2^24, whose ports
/// are the route's and whose unions are them. The one statement of the
/// rule: the fabric and wavelet verifiers and the binary's check call it.
std::string routePositionsProblem(const std::vector<RoutePositionSpec> &positions,
                                  unsigned inputs, unsigned outputs);

/// The real machine's fabric, 750 x 994 PEs: the largest fabric `--grid
/// auto` (and so a compile without `--grid`) considers by default.
inline constexpr const char *kFullFabric = "750x994";

/// Parameters of one fabric. Everything that a real part could vary is here.
struct TargetConfig {
  /// Grid size in PEs: columns (x, west to east) and rows (y, north to south).
  unsigned width = 16;
  unsigned height = 16;
  /// Memory per PE in bytes (default 48 KiB); a multiple of 8.
  unsigned memoryBytes = 48 * 1024;
  /// Colors the routers can route: 0 .. routableColors-1 (at most 32).
  unsigned routableColors = 24;
  /// Depth of each router input queue (one per input port and color).
  unsigned routerQueueDepth = 2;
  /// Depth of each compute-element input queue (one per color).
  unsigned ceQueueDepth = 8;

  /// Canonical text form: "16x16,mem=49152,colors=24,rq=2,cq=8".
  std::string str() const;
};

/// The machine model: a validated configuration plus the queries everyone
/// shares. Cheap to copy.
class Target {
public:
  /// Checks `config` against the architecture's limits. On failure returns
  /// std::nullopt and sets `error` to a sentence that names the bad value.
  static std::optional<Target> create(const TargetConfig &config,
                                      std::string *error = nullptr);
  /// Parses the text form of `TargetConfig::str()`; every key is optional
  /// except the leading WxH grid.
  static std::optional<Target> parse(const std::string &text,
                                     std::string *error = nullptr);

  const TargetConfig &config() const { return cfg; }
  unsigned width() const { return cfg.width; }
  unsigned height() const { return cfg.height; }
  uint64_t numPEs() const { return uint64_t(cfg.width) * cfg.height; }
  bool contains(int64_t x, int64_t y) const {
    return x >= 0 && y >= 0 && x < int64_t(cfg.width) &&
           y < int64_t(cfg.height);
  }
  /// Whether a wavelet leaving PE (x, y) through `d` has somewhere to go:
  /// a neighbour, a host port (west/east edges), or the PE's own CE.
  bool hasLink(int64_t x, int64_t y, Dir d) const;
  /// Whether that link is a host port rather than a PE.
  bool isHostPort(int64_t x, int64_t y, Dir d) const;

  unsigned memoryBytes() const { return cfg.memoryBytes; }
  unsigned memoryWords() const { return cfg.memoryBytes / 2; }
  unsigned memorySlots() const { return cfg.memoryBytes / 4; }
  unsigned routableColors() const { return cfg.routableColors; }
  bool isRoutableColor(int64_t c) const {
    return c >= 0 && c < int64_t(cfg.routableColors);
  }
  bool isTaskId(int64_t c) const {
    return c >= 0 && c < int64_t(Arch::kTaskIds);
  }
  /// Word address range that DSR load/store instructions can reach.
  unsigned descriptorWords() const;

  /// Host ports: one west and one east port per row, each moving at most one
  /// wavelet per cycle per direction.
  unsigned numHostPorts() const { return 2 * cfg.height; }

private:
  explicit Target(const TargetConfig &c) : cfg(c) {}
  TargetConfig cfg;
};

} // namespace weft::machine

#endif // WEFT_MACHINE_TARGET_H
