//===- File.h - Reading and writing .wfb files ------------------*- C++ -*-===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// The byte layout of a .wfb file (docs/binary-format.md) and its reader and
// writer. The writer is deterministic: the same Program gives the same bytes.
// The reader trusts nothing: it checks every length against the bytes that
// remain before it allocates, every enum and reserved field, the checksum,
// and finally calls verify(), so a truncated, corrupt or hostile file gives
// an error message and never a crash or a huge allocation.
//
// No MLIR dependency: the simulator uses this library.
//
//===----------------------------------------------------------------------===//

#ifndef WEFT_BINARY_FILE_H
#define WEFT_BINARY_FILE_H

#include "weft/Binary/Binary.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weft::binary {

/// The format version this library writes. It reads this one and every
/// version from kOldestFormatVersion on (docs/binary-format.md §6): version
/// 1 is version 2 without route positions.
constexpr uint16_t kFormatVersion = 2;
constexpr uint16_t kOldestFormatVersion = 1;
/// The first four bytes of every .wfb file.
constexpr uint8_t kMagic[4] = {'W', 'F', 'B', 0};

/// Merges identical code images (CodeImage::operator==) into the first of
/// them and renumbers Group::image; keeps the first-occurrence order of the
/// images that remain. write() does this, so read(write(p)) equals
/// mergeIdenticalImages(p).
void mergeIdenticalImages(Program &p);

/// Serializes `p` (after merging identical images). Deterministic: equal
/// programs give equal bytes. Does not verify `p`.
std::vector<uint8_t> write(const Program &p);

/// Parses and validates a .wfb image. On failure returns std::nullopt and,
/// if `error` is non-null, sets it to a sentence naming the byte offset and
/// what is wrong.
std::optional<Program> read(const uint8_t *data, size_t size,
                            std::string *error);

/// read() on the contents of the file at `path`.
std::optional<Program> readFile(const std::string &path, std::string *error);

/// Writes write(p) to `path`; false with `error` set on an I/O failure.
bool writeFile(const std::string &path, const Program &p, std::string *error);

/// FNV-1a, 64-bit: the file checksum (over every byte before it).
uint64_t fnv1a64(const uint8_t *data, size_t size);

} // namespace weft::binary

#endif // WEFT_BINARY_FILE_H
