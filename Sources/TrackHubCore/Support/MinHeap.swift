/// A binary min-heap of (key, value) pairs: the smallest key first. Used by the simulator's
/// route search (Dijkstra) and by the tick schedule's dozing trips (by the time they wake).
/// Pairs with equal keys come out in no particular order. Inlinable, so that other modules
/// get it specialised for their types: unspecialised, each comparison went through the
/// generic witness tables (the tick's wake-ups spent 2 % of the hub's CPU in `pop`).
public struct MinHeap<Key: Comparable, Value> {
    @usableFromInline var items: [(key: Key, value: Value)] = []

    /// An empty heap.
    @inlinable public init() {}

    /// How many pairs it holds.
    @inlinable public var count: Int { items.count }

    /// The smallest key, without removing its pair.
    @inlinable public var minKey: Key? { items.first?.key }

    /// Adds a pair (O(log n)).
    @inlinable public mutating func push(_ key: Key, _ value: Value) {
        items.append((key, value))
        var i = items.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if items[parent].key <= items[i].key { break }
            items.swapAt(parent, i)
            i = parent
        }
    }

    /// Removes and returns the pair with the smallest key (O(log n)).
    @inlinable public mutating func pop() -> (key: Key, value: Value)? {
        guard let top = items.first else { return nil }
        let last = items.removeLast()
        if !items.isEmpty {
            items[0] = last
            var i = 0
            while true {
                let l = 2 * i + 1, r = l + 1
                var m = i
                if l < items.count && items[l].key < items[m].key { m = l }
                if r < items.count && items[r].key < items[m].key { m = r }
                if m == i { break }
                items.swapAt(m, i)
                i = m
            }
        }
        return top
    }

    /// Empties the heap, keeping its storage.
    @inlinable public mutating func removeAll() { items.removeAll(keepingCapacity: true) }
}
