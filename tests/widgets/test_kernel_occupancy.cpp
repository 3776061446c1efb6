#include "engine/timeline/occupancy_estimate.h"

#include <QTest>

using kwb::timeline::estimateOccupancy;
using kwb::timeline::OccupancyLimiter;

namespace {
// QCOMPARE prints through toString(), which for this enum is the engine's own (a std::string).
int limiter(const kwb::timeline::OccupancyEstimate& e) {
    return static_cast<int>(e.limiter);
}
} // namespace

// Expected numbers worked out by hand from the sm_90 limits (64 warps, 32 blocks, 64K registers
// in 256-register units per warp, 228 KiB shared memory with 1 KiB reserved per block).
class TestKernelOccupancy : public QObject {
    Q_OBJECT
private slots:
    void fullOccupancyWhenNothingLimits() {
        const auto e = estimateOccupancy(256, 32, 0);
        QCOMPARE(e.blocksPerSm, 8u);
        QCOMPARE(e.activeWarpsPerSm, 64u);
        QCOMPARE(e.maxWarpsPerSm, 64u);
        QCOMPARE(e.occupancy, 1.0);
        QCOMPARE(limiter(e), static_cast<int>(OccupancyLimiter::Warps));
    }

    void registersLimit() {
        // 64 regs x 32 threads = 2048 per warp: 32 warps fit, 4 blocks of 8 warps.
        const auto e = estimateOccupancy(256, 64, 0);
        QCOMPARE(e.blocksPerSm, 4u);
        QCOMPARE(e.occupancy, 0.5);
        QCOMPARE(limiter(e), static_cast<int>(OccupancyLimiter::Registers));
        // 168 regs: 5376 per warp (already a multiple of 256), 12 warps, one block of 8.
        const auto heavy = estimateOccupancy(256, 168, 98304);
        QCOMPARE(heavy.blocksPerSm, 1u);
        QCOMPARE(heavy.activeWarpsPerSm, 8u);
        QCOMPARE(heavy.occupancy, 0.125);
        // 33 regs round up to 1280 per warp: 51 warps, 6 blocks of 8 = 48 warps.
        const auto rounded = estimateOccupancy(256, 33, 0);
        QCOMPARE(rounded.blocksPerSm, 6u);
        QCOMPARE(rounded.occupancy, 0.75);
    }

    void sharedMemoryLimit() {
        // 48 KiB + 1 KiB reserved = 50176 bytes: 4 blocks in 228 KiB; 4 warps each.
        const auto e = estimateOccupancy(128, 0, 48 * 1024);
        QCOMPARE(e.blocksPerSm, 4u);
        QCOMPARE(e.activeWarpsPerSm, 16u);
        QCOMPARE(e.occupancy, 0.25);
        QCOMPARE(limiter(e), static_cast<int>(OccupancyLimiter::SharedMemory));
    }

    void blockSlotLimit() {
        // One warp per block: the 32 block slots fill half the warps.
        const auto e = estimateOccupancy(32, 16, 0);
        QCOMPARE(e.blocksPerSm, 32u);
        QCOMPARE(e.occupancy, 0.5);
        QCOMPARE(limiter(e), static_cast<int>(OccupancyLimiter::Blocks));
        // A partial warp still takes a whole warp.
        QCOMPARE(estimateOccupancy(48, 16, 0).activeWarpsPerSm, 64u);
    }

    void namesTheLimiter() {
        QCOMPARE(QString::fromStdString(toString(OccupancyLimiter::SharedMemory)),
                 QString("shared memory"));
    }

    void launchesThatCannotRun() {
        const auto tooManyRegisters = estimateOccupancy(1024, 255, 0);
        QCOMPARE(tooManyRegisters.blocksPerSm, 0u);
        QCOMPARE(tooManyRegisters.occupancy, 0.0);
        QCOMPARE(limiter(tooManyRegisters), static_cast<int>(OccupancyLimiter::Registers));
        QCOMPARE(limiter(estimateOccupancy(2048, 16, 0)),
                 static_cast<int>(OccupancyLimiter::DoesNotFit));
        QCOMPARE(limiter(estimateOccupancy(0, 16, 0)),
                 static_cast<int>(OccupancyLimiter::DoesNotFit));
        QCOMPARE(limiter(estimateOccupancy(128, 16, 228 * 1024)),
                 static_cast<int>(OccupancyLimiter::DoesNotFit));
    }
};

QTEST_GUILESS_MAIN(TestKernelOccupancy)
#include "test_kernel_occupancy.moc"
