import Testing
@testable import TrackHubCore

@Suite struct MinHeapTests {
    @Test func popsEveryPairSmallestKeyFirst() {
        var rng = SplitMix64(seed: 7)
        var heap = MinHeap<Int64, Int>()
        var keys: [Int64] = []
        for i in 0..<500 {
            let key = Int64(rng.uniform(0, 1000))
            keys.append(key)
            heap.push(key, i)
        }
        #expect(heap.count == 500 && heap.minKey == keys.min())
        var popped: [Int64] = []
        while let (key, _) = heap.pop() { popped.append(key) }
        #expect(popped == keys.sorted())
        #expect(heap.pop() == nil && heap.minKey == nil)
    }
}
