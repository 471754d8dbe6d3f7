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

    /// Builds the tree over `ids`, taking each id's position from `xs` and `ys`.
    init(ids source: ContiguousArray<Int32>, xs: ContiguousArray<Double>, ys: ContiguousArray<Double>, nodeSize: Int = 32) {
        var ids = source
        var coords = ContiguousArray<Double>(repeating: 0, count: source.count * 2)
        xs.withUnsafeBufferPointer { xp in
            ys.withUnsafeBufferPointer { yp in
                coords.withUnsafeMutableBufferPointer { cp in
                    for (i, id) in source.enumerated() {
                        cp[2 * i] = xp[Int(id)]
                        cp[2 * i + 1] = yp[Int(id)]
                    }
                }
            }
        }
        let n = ids.count
        if n > 1 {
            ids.withUnsafeMutableBufferPointer { ip in
                coords.withUnsafeMutableBufferPointer { cp in
                    // swiftlint:disable:next force_unwrapping
                    FleetKDTree.sort(ip.baseAddress!, cp.baseAddress!, nodeSize, 0, n - 1, 0)
                }
            }
        }
        self.ids = ids
        self.coords = coords
        self.nodeSize = nodeSize
    }

    /// Calls `body` with the id of every entry within the closed box.
    @inline(__always)
    func forEachInRange(
        minX: Double, minY: Double, maxX: Double, maxY: Double,
        stack: inout ContiguousArray<Int>, _ body: (Int32) -> Void
    ) {
        let n = ids.count
        guard n > 0 else { return }
        stack.removeAll(keepingCapacity: true)
        let nodeSize = self.nodeSize
        ids.withUnsafeBufferPointer { ip in
            coords.withUnsafeBufferPointer { cp in
                stack.append(0)
                stack.append(n - 1)
                stack.append(0)
                while let axis = stack.popLast() {
                    let right = stack.removeLast()
                    let left = stack.removeLast()
                    if right - left <= nodeSize {
                        var i = left
                        while i <= right {
                            let x = cp[2 * i], y = cp[2 * i + 1]
                            if x >= minX && x <= maxX && y >= minY && y <= maxY { body(ip[i]) }
                            i += 1
                        }
                        continue
                    }
                    let m = (left + right) >> 1
                    let x = cp[2 * m], y = cp[2 * m + 1]
                    if x >= minX && x <= maxX && y >= minY && y <= maxY { body(ip[m]) }
                    if axis == 0 ? minX <= x : minY <= y {
                        stack.append(left)
                        stack.append(m - 1)
                        stack.append(1 - axis)
                    }
                    if axis == 0 ? maxX >= x : maxY >= y {
                        stack.append(m + 1)
                        stack.append(right)
                        stack.append(1 - axis)
                    }
                }
            }
        }
    }

    /// Calls `body` with the id of every entry within distance `r` of `(qx, qy)`.
    @inline(__always)
    func forEachWithin(
        _ qx: Double, _ qy: Double, _ r: Double,
        stack: inout ContiguousArray<Int>, _ body: (Int32) -> Void
    ) {
        let n = ids.count
        guard n > 0 else { return }
        stack.removeAll(keepingCapacity: true)
        let nodeSize = self.nodeSize
        let r2 = r * r
        ids.withUnsafeBufferPointer { ip in
            coords.withUnsafeBufferPointer { cp in
                stack.append(0)
                stack.append(n - 1)
                stack.append(0)
                while let axis = stack.popLast() {
                    let right = stack.removeLast()
                    let left = stack.removeLast()
                    if right - left <= nodeSize {
                        var i = left
                        while i <= right {
                            let dx = cp[2 * i] - qx, dy = cp[2 * i + 1] - qy
                            if dx * dx + dy * dy <= r2 { body(ip[i]) }
                            i += 1
                        }
                        continue
                    }
                    let m = (left + right) >> 1
                    let x = cp[2 * m], y = cp[2 * m + 1]
                    let dx = x - qx, dy = y - qy
                    if dx * dx + dy * dy <= r2 { body(ip[m]) }
                    if axis == 0 ? qx - r <= x : qy - r <= y {
                        stack.append(left)
                        stack.append(m - 1)
                        stack.append(1 - axis)
                    }
                    if axis == 0 ? qx + r >= x : qy + r >= y {
                        stack.append(m + 1)
                        stack.append(right)
                        stack.append(1 - axis)
                    }
                }
            }
        }
    }

    // MARK: - Building (kdbush's sort and Floyd–Rivest select)

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
