/// Records of one kind, by key, in the order they came, at most `maximum`: at the bound the oldest goes to make
/// room for the next, so a client that keeps adding pushes out its own oldest, never everything at once.
struct BoundedRecords<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private(set) var byKey: [Key: Value] = [:]
    /// Keys oldest first from `head`; the slots before `head` are spent and dropped in bulk.
    private var order: [Key] = []
    private var head = 0
    let maximum: Int

    init(maximum: Int) { self.maximum = max(1, maximum) }

    /// The values, oldest first.
    var inOrder: [Value] { order[head...].compactMap { byKey[$0] } }

    /// Adds `value` as the newest; one already at `key` is replaced and counts as the newest. Whether the oldest
    /// was pushed out to make room.
    @discardableResult
    mutating func insert(_ value: Value, at key: Key) -> Bool {
        if byKey.updateValue(value, forKey: key) != nil {
            // A store that replaces a row gives it a new place, the newest: the same here.
            if let index = order[head...].firstIndex(of: key) { order.remove(at: index) }
            order.append(key)
            return false
        }
        order.append(key)
        guard byKey.count > maximum else { return false }
        evictOldest()
        return true
    }

    private mutating func evictOldest() {
        while head < order.count {
            let key = order[head]
            head += 1
            if byKey.removeValue(forKey: key) != nil { break }
        }
        if head >= 1024, head * 2 >= order.count {
            order.removeFirst(head)
            head = 0
        }
    }
}
