import CSQLite
import Dispatch
import Foundation
import Synchronization

/// Keeps WAL checkpoints off the commit that acks fixes.
///
/// Why: SQLite's automatic checkpoint runs inside the commit that pushes the WAL past 1 000
/// pages. That commit, and every fix waiting to be acked behind it, then waits while about
/// 4 MB are copied into the database file and synced: at one fix per commit (each commit
/// writes a few pages) that is every few hundred commits, and it was the ack's tail.
///
/// How: the write connection's WAL hook (which replaces SQLite's automatic checkpoint) tells
/// this type the WAL's size after each commit; past `thresholdPages` its own thread, with its
/// own connection, runs a PASSIVE checkpoint, which copies what no reader still needs and
/// never blocks the writer or the readers; the writer restarts the WAL from its start on a
/// later commit once a checkpoint got through all of it. Bound: should that thread fall behind
/// (commits faster than it copies, on a loaded machine; or a long read holding an old
/// snapshot), the WAL would grow without end, so past `fallbackPages` the writer also runs a
/// PASSIVE checkpoint after each commit, as SQLite's own automatic checkpoint would: it never
/// waits (busy while this thread's checkpoint runs), and once one copies every frame with no
/// commit in between, the next commit starts the WAL again from its beginning.
/// `writerCheckpoints` counts them.
///
/// Threads: `walGrew` runs on the writer thread (inside its commit); the checkpoints on this
/// type's own thread; `stop` from the store's `close`.
final class SQLiteCheckpointer: @unchecked Sendable {
    /// WAL pages (4 KiB each) after which a checkpoint is asked for: four times SQLite's own
    /// default. A checkpoint copies each page once however often the WAL holds it, and the
    /// pages one-fix commits write are mostly the same few (the fixes' last leaf, the moving
    /// trips' index and state pages): a longer WAL copies fewer pages per commit and syncs the
    /// database a quarter as often (BENCHMARKS.md, "The fix path"). 16 MB of WAL at most
    /// between checkpoints, in the page cache.
    static let thresholdPages: Int32 = 4000
    /// WAL pages after which the writer checkpoints itself (about 40 MB).
    static let fallbackPages: Int32 = 10_000

    /// Its own read-write connection, used only on its thread.
    private let connection: SQLiteConnection
    /// A checkpoint has been asked for and not started yet (one wake-up per request).
    private let requested = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// Checkpoints run on its thread (tests, benchmarks).
    let checkpoints = Atomic<Int>(0)
    /// Checkpoints the writer ran itself, past `fallbackPages`.
    let writerCheckpoints = Atomic<Int>(0)
    /// The most pages the WAL held after a commit: what the bound is about.
    let mostWALPages = Atomic<Int>(0)
    /// Signalled after each checkpoint on its thread: what a test waits on, with a deadline.
    let checkpointed = DispatchSemaphore(value: 0)

    /// Opens its connection to the database at `path` with the writer's `synchronous` (so a
    /// checkpoint syncs as the writer would) and hooks the write connection `writer`.
    init(path: String, synchronous: String, writer: SQLiteConnection) throws(SQLiteError) {
        connection = try SQLiteConnection(path: path, readOnly: false)
        try connection.exec("PRAGMA busy_timeout=5000; PRAGMA synchronous=\(synchronous)")
        sqlite3_wal_hook(writer.handle, { context, db, _, pages in
            guard let context else { return SQLITE_OK }
            Unmanaged<SQLiteCheckpointer>.fromOpaque(context).takeUnretainedValue().walGrew(to: pages, writer: db)
            return SQLITE_OK
        }, Unmanaged.passUnretained(self).toOpaque())
        let thread = Thread { [self] in run() }
        thread.name = "trackhub-store-checkpoint"
        thread.start()
    }

    /// After each commit of the writer (inside it): the WAL holds `pages` pages.
    private func walGrew(to pages: Int32, writer: OpaquePointer?) {
        if Int(pages) > mostWALPages.load(ordering: .relaxed) { mostWALPages.store(Int(pages), ordering: .relaxed) }
        if pages >= Self.fallbackPages, let writer {
            // This thread is behind: bound the WAL as SQLite's own automatic checkpoint would.
            _ = sqlite3_wal_checkpoint_v2(writer, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            writerCheckpoints.add(1, ordering: .relaxed)
        } else if pages >= Self.thresholdPages, !requested.exchange(true, ordering: .acquiringAndReleasing) {
            wake.signal()
        }
    }

    private func run() {
        while true {
            wake.wait()
            if stopping.load(ordering: .acquiring) { break }
            requested.store(false, ordering: .releasing)
            _ = sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_PASSIVE, nil, nil)
            checkpoints.add(1, ordering: .relaxed)
            checkpointed.signal()
        }
        stopped.signal()
    }

    /// Once the writer thread has stopped: stops this thread (after the checkpoint in
    /// progress, if any) and unhooks `writer`, so nothing refers to this type any more.
    /// Closing the last connection checkpoints what is left. Call once.
    func stop(unhooking writer: SQLiteConnection) {
        stopping.store(true, ordering: .releasing)
        wake.signal()
        stopped.wait()
        sqlite3_wal_hook(writer.handle, nil, nil)
    }
}
