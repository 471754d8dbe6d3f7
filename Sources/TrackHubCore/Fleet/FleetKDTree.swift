import Dispatch
import Foundation

/// A static 2-D KD-tree over flat arrays, after kdbush: the ids and their interleaved
/// coordinates are sorted in place into a balanced implicit tree (median splits,
/// alternating axes) whose leaves hold at most `nodeSize` entries.
///
/// Immutable once built, so it is safe to read from many threads.
struct FleetKDTree: Sendable {
    /// The entries' ids (node numbers of the index), in tree order.
    let ids: ContiguousArray<Int32>
    /// `x, y` of each entry, interleaved, in tree order.
    let coords: ContiguousArray<Double>
    /// The largest run of entries scanned linearly.
    let nodeSize: Int

    /// The number of entries.
    var count: Int { ids.count }

    /// Builds the tree over `ids`, taking each id's position from `xs` and `ys`
    /// (indexed by id).
    /// With `parallel`, a large tree sorts its two halves on two threads.
    init(
        ids source: ContiguousArray<Int32>, xs: UnsafePointer<Double>, ys: UnsafePointer<Double>,
        nodeSize: Int = 32, parallel: Bool = false
    ) {
        var ids = source
        let n = source.count
        var coords = ContiguousArray<Double>(unsafeUninitializedCapacity: 2 * n) { cp, initialized in
            source.withUnsafeBufferPointer { sp in
                for i in 0..<n {
                    let id = Int(sp[i])
                    cp[2 * i] = xs[id]
                    cp[2 * i + 1] = ys[id]
                }
            }
            initialized = 2 * n
        }
        if n > 1 {
            ids.withUnsafeMutableBufferPointer { ip in
                coords.withUnsafeMutableBufferPointer { cp in
                    if let i = ip.baseAddress, let c = cp.baseAddress {
                        if parallel && n >= Self.parallelSortSize {
                            // Split once, then sort the halves side by side: disjoint ranges.
                            let m = (n - 1) >> 1
                            FleetKDTree.select(i, c, m, 0, n - 1, 0)
                            // The halves are disjoint ranges of both arrays.
                            let shared = FleetUncheckedSendable((i, c))
                            DispatchQueue.concurrentPerform(iterations: 2) { half in
                                let (i, c) = shared.value
                                if half == 0 {
                                    FleetKDTree.sort(i, c, nodeSize, 0, m - 1, 1)
                                } else {
                                    FleetKDTree.sort(i, c, nodeSize, m + 1, n - 1, 1)
                                }
                            }
                        } else {
                            FleetKDTree.sort(i, c, nodeSize, 0, n - 1, 0)
                        }
                    }
                }
            }
        }
        self.ids = ids
        self.coords = coords
        self.nodeSize = nodeSize
    }

    /// The most stack entries a query can need (3 per pending subtree, 2 per level).
    static let stackCapacity = 3 * 2 * 64

    /// Calls `body` with the id of every entry within the closed box.
    func forEachInRange(minX: Double, minY: Double, maxX: Double, maxY: Double, _ body: (Int32) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: Self.stackCapacity) { stack in
            // swiftlint:disable:next force_unwrapping
            range(minX, minY, maxX, maxY, stack: stack.baseAddress!, body)
        }
    }

    /// Calls `body` with the id of every entry within distance `r` of `(qx, qy)`.
    func forEachWithin(_ qx: Double, _ qy: Double, _ r: Double, _ body: (Int32) -> Void) {
        withUnsafeTemporaryAllocation(of: Int.self, capacity: Self.stackCapacity) { stack in
            // swiftlint:disable:next force_unwrapping
            within(qx, qy, r, stack: stack.baseAddress!, body)
        }
    }

    /// Box query; `stack` holds at least `stackCapacity` entries.
    @inline(__always)
    func range(
        _ minX: Double, _ minY: Double, _ maxX: Double, _ maxY: Double,
        stack: UnsafeMutablePointer<Int>, _ body: (Int32) -> Void
    ) {
        let n = ids.count
        guard n > 0 else { return }
        let nodeSize = self.nodeSize
        ids.withUnsafeBufferPointer { ids in
            coords.withUnsafeBufferPointer { coords in
                var top = 3
                stack[0] = 0
                stack[1] = n - 1
                stack[2] = 0
                while top > 0 {
                    let axis = stack[top - 1]
                    let right = stack[top - 2]
                    let left = stack[top - 3]
                    top -= 3
                    if right - left <= nodeSize {
                        var i = left
                        while i <= right {
                            let x = coords[2 * i], y = coords[2 * i + 1]
                            if x >= minX && x <= maxX && y >= minY && y <= maxY { body(ids[i]) }
                            i += 1
                        }
                        continue
                    }
                    let m = (left + right) >> 1
                    let x = coords[2 * m], y = coords[2 * m + 1]
                    if x >= minX && x <= maxX && y >= minY && y <= maxY { body(ids[m]) }
                    if axis == 0 ? minX <= x : minY <= y {
                        stack[top] = left
                        stack[top + 1] = m - 1
                        stack[top + 2] = 1 - axis
                        top += 3
                    }
                    if axis == 0 ? maxX >= x : maxY >= y {
                        stack[top] = m + 1
                        stack[top + 1] = right
                        stack[top + 2] = 1 - axis
                        top += 3
                    }
                }
            }
        }
    }

    /// Radius query; `stack` holds at least `stackCapacity` entries.
    @inline(__always)
    func within(
        _ qx: Double, _ qy: Double, _ r: Double,
        stack: UnsafeMutablePointer<Int>, _ body: (Int32) -> Void
    ) {
        let n = ids.count
        guard n > 0 else { return }
        let nodeSize = self.nodeSize
        let r2 = r * r
        ids.withUnsafeBufferPointer { ids in
            coords.withUnsafeBufferPointer { coords in
                var top = 3
                stack[0] = 0
                stack[1] = n - 1
                stack[2] = 0
                while top > 0 {
                    let axis = stack[top - 1]
                    let right = stack[top - 2]
                    let left = stack[top - 3]
                    top -= 3
                    if right - left <= nodeSize {
                        var i = left
                        while i <= right {
                            let dx = coords[2 * i] - qx, dy = coords[2 * i + 1] - qy
                            if dx * dx + dy * dy <= r2 { body(ids[i]) }
                            i += 1
                        }
                        continue
                    }
                    let m = (left + right) >> 1
                    let x = coords[2 * m], y = coords[2 * m + 1]
                    let dx = x - qx, dy = y - qy
                    if dx * dx + dy * dy <= r2 { body(ids[m]) }
                    if axis == 0 ? qx - r <= x : qy - r <= y {
                        stack[top] = left
                        stack[top + 1] = m - 1
                        stack[top + 2] = 1 - axis
                        top += 3
                    }
                    if axis == 0 ? qx + r >= x : qy + r >= y {
                        stack[top] = m + 1
                        stack[top + 1] = right
                        stack[top + 2] = 1 - axis
                        top += 3
                    }
                }
            }
        }
    }

    // MARK: - Building (kdbush's sort and Floyd–Rivest select)

    /// Trees of at least this many entries sort their halves on two threads.
    static var parallelSortSize: Int { 32_768 }

    private static func sort(
        _ ids: UnsafeMutablePointer<Int32>, _ coords: UnsafeMutablePointer<Double>,
        _ nodeSize: Int, _ left: Int, _ right: Int, _ axis: Int
    ) {
        if right - left <= nodeSize { return }
        let m = (left + right) >> 1
        select(ids, coords, m, left, right, axis)
        sort(ids, coords, nodeSize, left, m - 1, 1 - axis)
        sort(ids, coords, nodeSize, m + 1, right, 1 - axis)
    }

    private static func select(
        _ ids: UnsafeMutablePointer<Int32>, _ coords: UnsafeMutablePointer<Double>,
        _ k: Int, _ leftIn: Int, _ rightIn: Int, _ axis: Int
    ) {
        var left = leftIn
        var right = rightIn
        while right > left {
            if right - left > 600 {
                let n = Double(right - left + 1)
                let m = Double(k - left + 1)
                let z = log(n)
                let s = 0.5 * exp(2 * z / 3)
                let sd = 0.5 * (z * s * (n - s) / n).squareRoot() * (m - n / 2 < 0 ? -1 : 1)
                let newLeft = max(left, Int((Double(k) - m * s / n + sd).rounded(.down)))
                let newRight = min(right, Int((Double(k) + (n - m) * s / n + sd).rounded(.down)))
                select(ids, coords, k, newLeft, newRight, axis)
            }
            let t = coords[2 * k + axis]
            var i = left
            var j = right
            swapItem(ids, coords, left, k)
            if coords[2 * right + axis] > t { swapItem(ids, coords, left, right) }
            while i < j {
                swapItem(ids, coords, i, j)
                i += 1
                j -= 1
                while coords[2 * i + axis] < t { i += 1 }
                while coords[2 * j + axis] > t { j -= 1 }
            }
            if coords[2 * left + axis] == t {
                swapItem(ids, coords, left, j)
            } else {
                j += 1
                swapItem(ids, coords, j, right)
            }
            if j <= k { left = j + 1 }
            if k <= j { right = j - 1 }
        }
    }

    @inline(__always)
    private static func swapItem(
        _ ids: UnsafeMutablePointer<Int32>, _ coords: UnsafeMutablePointer<Double>, _ i: Int, _ j: Int
    ) {
        let t = ids[i]
        ids[i] = ids[j]
        ids[j] = t
        let x = coords[2 * i], y = coords[2 * i + 1]
        coords[2 * i] = coords[2 * j]
        coords[2 * i + 1] = coords[2 * j + 1]
        coords[2 * j] = x
        coords[2 * j + 1] = y
    }
}
