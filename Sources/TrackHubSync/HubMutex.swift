import Synchronization

/// `Synchronization.Mutex` plus the happens-before edges ThreadSanitizer cannot see.
///
/// Why: on Linux, `Mutex` locks with a futex from inside the (uninstrumented) standard
/// library, so a `--sanitize=thread` build sees no synchronisation at all and reports every
/// access inside `withLock` as a race (bench/tsan-repro shows it). Built with
/// `-Xswiftc -DTRACKHUB_TSAN` (scripts/tsan.sh does), `withLock` tells ThreadSanitizer
/// "acquired" on entry and "released" on exit, on a byte of this lock's own, so only accesses
/// made outside the lock are reported. Without the flag it is exactly `Mutex`, at no cost.
/// `@unchecked Sendable` as `Mutex` is: the value is only reached with the lock held (the
/// token pointer is only handed to TSan).
public struct HubMutex<Value: ~Copyable>: ~Copyable, @unchecked Sendable {
    @usableFromInline let mutex: Mutex<Value>
    #if TRACKHUB_TSAN
    /// The address ThreadSanitizer's acquire and release name: a byte of its own, because taking
    /// the guarded value's address is itself an access TSan checks, made before the acquire.
    @usableFromInline let token: UnsafeMutableRawPointer
    #endif

    /// A lock guarding `initialValue`, as `Mutex.init`.
    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
        #if TRACKHUB_TSAN
        token = .allocate(byteCount: 1, alignment: 1)
        #endif
    }

    #if TRACKHUB_TSAN
    @inlinable
    deinit { token.deallocate() }
    #endif

    /// Runs `body` with the value, the lock held, as `Mutex.withLock`.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        #if TRACKHUB_TSAN
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            tsanAcquire(token)
            defer { tsanRelease(token) }
            return try body(&value)
        }
        #else
        return try mutex.withLock(body)
        #endif
    }
}

#if TRACKHUB_TSAN
// The TSan runtime's own C entry points, linked in a --sanitize=thread build only (hence the
// flag); one pointer argument and no result, passed alike by Swift's and C's conventions.

/// ThreadSanitizer's annotation: the calling thread now sees every write released on `address`.
@usableFromInline @_silgen_name("__tsan_acquire")
func tsanAcquire(_ address: UnsafeMutableRawPointer)

/// ThreadSanitizer's annotation: every write so far is visible to the next acquire on `address`.
@usableFromInline @_silgen_name("__tsan_release")
func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif
