import Testing
@testable import TrackHubServer

/// `CommitHereBudget`: commits on the service thread only while it was not busy in the last
/// window, and for at most a fifth of each window.
@Suite struct CommitHereBudgetTests {
    let window = CommitHereBudget.windowMicros

    @Test func aQuietThreadCommitsHereUntilAFifthOfTheWindowIsSpent() {
        var budget = CommitHereBudget()
        let start: Int64 = 1_000_000
        let allowed1 = budget.allows(at: start, threadCPU: 0)
        #expect(allowed1)
        budget.spend(19_000)
        let allowed2 = budget.allows(at: start + 30_000, threadCPU: 19_000)
        #expect(allowed2)
        budget.spend(1_000)
        let allowed3 = budget.allows(at: start + 40_000, threadCPU: 20_000)
        #expect(!allowed3)  // 20 ms of this window spent
        // The next window: the thread used 20 ms of 100: quiet, and the budget is new.
        let allowed4 = budget.allows(at: start + window, threadCPU: 20_000)
        #expect(allowed4)
    }

    @Test func aBusyThreadSendsEveryBatchToTheWriterUntilAQuietWindow() {
        var budget = CommitHereBudget()
        let start: Int64 = 1_000_000
        let allowed5 = budget.allows(at: start, threadCPU: 0)
        #expect(allowed5)
        // The thread used 60 ms of the 100 (sending frames, say): the next window commits nothing here.
        let allowed6 = budget.allows(at: start + window, threadCPU: 60_000)
        #expect(!allowed6)
        let allowed7 = budget.allows(at: start + window + 50_000, threadCPU: 90_000)
        #expect(!allowed7)
        // A window in which it used 30 ms of 100: commits here again.
        let allowed8 = budget.allows(at: start + 2 * window, threadCPU: 90_000)
        #expect(allowed8)
    }
}
