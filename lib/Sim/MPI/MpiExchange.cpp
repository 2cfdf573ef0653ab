//===- MpiExchange.cpp - BandExchange over MPI ----------------------------===//
//
// Part of the weft project: an MLIR-based compiler for a wafer-scale fabric.
//
//===----------------------------------------------------------------------===//
//
// Each cycle of a distributed run costs one exchange with the neighbouring
// ranks (non-blocking sends and receives of at most maxWords words) and two
// MPI_Allreduce of a few words (lib/Sim/Band.cpp).
//
//===----------------------------------------------------------------------===//

#include "weft/Sim/MpiExchange.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>

namespace weft::sim {

namespace {

class MpiExchange final : public BandExchange {
public:
  MpiExchange() {
    int r = 0, n = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    myRank = unsigned(r);
    ranks = unsigned(n);
  }
  ~MpiExchange() override { MPI_Finalize(); }

  unsigned rank() const override { return myRank; }
  unsigned size() const override { return ranks; }

  void swapEdges(const std::vector<uint64_t> &toNorth,
                 const std::vector<uint64_t> &toSouth,
                 std::vector<uint64_t> &fromNorth,
                 std::vector<uint64_t> &fromSouth, size_t maxWords) override {
    MPI_Request req[4];
    int count = 0;
    bool north = myRank > 0, south = myRank + 1 < ranks;
    fromNorth.resize(north ? maxWords : 0);
    fromSouth.resize(south ? maxWords : 0);
    if (north) {
      MPI_Irecv(fromNorth.data(), int(maxWords), MPI_UINT64_T, int(myRank - 1),
                kTag, MPI_COMM_WORLD, &req[count++]);
      MPI_Isend(toNorth.data(), int(toNorth.size()), MPI_UINT64_T,
                int(myRank - 1), kTag, MPI_COMM_WORLD, &req[count++]);
    }
    if (south) {
      MPI_Irecv(fromSouth.data(), int(maxWords), MPI_UINT64_T, int(myRank + 1),
                kTag, MPI_COMM_WORLD, &req[count++]);
      MPI_Isend(toSouth.data(), int(toSouth.size()), MPI_UINT64_T,
                int(myRank + 1), kTag, MPI_COMM_WORLD, &req[count++]);
    }
    MPI_Status status[4];
    MPI_Waitall(count, req, status);
    int got = 0;
    if (north) {
      MPI_Get_count(&status[0], MPI_UINT64_T, &got);
      fromNorth.resize(size_t(got));
    }
    if (south) {
      MPI_Get_count(&status[north ? 2 : 0], MPI_UINT64_T, &got);
      fromSouth.resize(size_t(got));
    }
    edgeMessages += count / 2;
  }

  void allMin(uint64_t *values, size_t n) override {
    MPI_Allreduce(MPI_IN_PLACE, values, int(n), MPI_UINT64_T, MPI_MIN,
                  MPI_COMM_WORLD);
  }

  std::vector<std::vector<uint8_t>>
  gather(const std::vector<uint8_t> &mine) override {
    // Sizes first (a part may exceed 2 GiB only for fabrics far beyond
    // what one rank holds), then the bytes, in chunks of at most 1 GiB.
    uint64_t size = mine.size();
    std::vector<uint64_t> sizes(myRank == 0 ? ranks : 0);
    MPI_Gather(&size, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0,
               MPI_COMM_WORLD);
    std::vector<std::vector<uint8_t>> parts;
    constexpr uint64_t kChunk = uint64_t(1) << 30;
    if (myRank != 0) {
      for (uint64_t at = 0; at < size; at += kChunk)
        MPI_Send(mine.data() + at, int(std::min(kChunk, size - at)), MPI_BYTE,
                 0, kTag, MPI_COMM_WORLD);
      return parts;
    }
    parts.resize(ranks);
    parts[0] = mine;
    for (unsigned r = 1; r < ranks; ++r) {
      parts[r].resize(sizes[r]);
      for (uint64_t at = 0; at < sizes[r]; at += kChunk)
        MPI_Recv(parts[r].data() + at, int(std::min(kChunk, sizes[r] - at)),
                 MPI_BYTE, int(r), kTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return parts;
  }

private:
  static constexpr int kTag = 15;
  unsigned myRank = 0, ranks = 1;
};

} // namespace

bool launchedWithSeveralRanks() {
  for (const char *var :
       {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) {
    const char *v = std::getenv(var);
    if (v && std::atoi(v) > 1)
      return true;
  }
  return false;
}

std::unique_ptr<BandExchange> createMpiExchange(int *argc, char ***argv,
                                                std::string *error) {
  if (MPI_Init(argc, argv) != MPI_SUCCESS) {
    if (error)
      *error = "MPI_Init failed";
    return nullptr;
  }
  return std::make_unique<MpiExchange>();
}

} // namespace weft::sim
