import MediaTime
import Scheduling
import Supervisor
import Testing

@Suite("The supervisor's restart policy")
struct SupervisorStateMachineTests {
    typealias Key = SupervisorStateMachine.ItemKey
    static let second = MediaTime(value: 1, timescale: 1)
    static func seconds(_ value: Int64) -> MediaTime { MediaTime(value: value, timescale: 1) }
    let a = Key(playlist: "lobby", index: 0)
    let b = Key(playlist: "lobby", index: 1)
    let c = Key(playlist: "lobby", index: 2)

    @Test("a failing item is retried with the documented backoff, capped, then skipped")
    func backoffThenSkip() {
        let policy = RestartPolicy(retries: 4, backoff: Self.second, backoffMultiplier: 3, maximumBackoff: Self.seconds(10), onFailure: .skip, fallbackAfter: 3)
        var machine = SupervisorStateMachine(policy: policy)
        let actions = (0..<5).map { _ in machine.handle(.itemFailed(a, reason: "cannot open"), at: .zero) }
        #expect(actions == [
            .retry(a, attempt: 1, after: Self.seconds(1)),
            .retry(a, attempt: 2, after: Self.seconds(3)),
            .retry(a, attempt: 3, after: Self.seconds(9)),
            .retry(a, attempt: 4, after: Self.seconds(10)),  // 27 s capped at max_backoff
            .skip(a),
        ])
        #expect(machine.state == .following(consecutiveFailures: 1))
    }

    @Test("on_failure = fallback switches at once when the retries are spent")
    func onFailureFallback() {
        var machine = SupervisorStateMachine(policy: RestartPolicy(retries: 1, onFailure: .fallback, fallbackAfter: 5))
        #expect(machine.handle(.stalled(a), at: .zero) == .retry(a, attempt: 1, after: Self.second))
        #expect(machine.handle(.stalled(a), at: .zero) == .playFallback(reason: "lobby[0] failed 2 times"))
        #expect(machine.state == .onFallback)
    }

    @Test("fallback_after consecutive failed items switch to the fallback until the next entry change; a played item breaks the run")
    func fallbackAfter() {
        var machine = SupervisorStateMachine(policy: RestartPolicy(retries: 0, onFailure: .skip, fallbackAfter: 3))
        #expect(machine.handle(.itemFailed(a, reason: "x"), at: .zero) == .skip(a))
        #expect(machine.handle(.itemFailed(b, reason: "x"), at: .zero) == .skip(b))
        machine.itemPlayed(c)
        #expect(machine.state == .following(consecutiveFailures: 0))
        #expect(machine.handle(.itemFailed(a, reason: "x"), at: .zero) == .skip(a))
        #expect(machine.handle(.itemFailed(b, reason: "x"), at: .zero) == .skip(b))
        #expect(machine.handle(.itemFailed(c, reason: "x"), at: .zero) == .playFallback(reason: "3 items in a row failed"))
        // On the fallback, a failing fallback item is skipped; playing one keeps the fallback.
        let fallbackItem = Key(playlist: "house", index: 0)
        #expect(machine.handle(.itemFailed(fallbackItem, reason: "x"), at: .zero) == .skip(fallbackItem))
        machine.itemPlayed(fallbackItem)
        #expect(machine.state == .onFallback)
        machine.entryChanged()
        #expect(machine.state == .following(consecutiveFailures: 0))
    }

    @Test("an item that plays again gets its full retries back")
    func retriesReset() {
        var machine = SupervisorStateMachine(policy: RestartPolicy(retries: 2))
        _ = machine.handle(.itemFailed(a, reason: "x"), at: .zero)
        _ = machine.handle(.itemFailed(a, reason: "x"), at: .zero)
        machine.itemPlayed(a)
        #expect(machine.handle(.itemFailed(a, reason: "x"), at: .zero) == .retry(a, attempt: 1, after: Self.second))
    }

    @Test("display and audio failures rebuild the pipeline, until too many rebuilds in the window end the process")
    func rebuildsThenExit() {
        var machine = SupervisorStateMachine(policy: RestartPolicy(), maximumRebuilds: 2, rebuildWindow: Self.seconds(60))
        #expect(machine.handle(.displayFailed(reason: "flip timed out"), at: Self.seconds(0)) == .rebuildPipeline(reason: "flip timed out"))
        #expect(machine.handle(.audioFailed(reason: "device gone"), at: Self.seconds(10)) == .rebuildPipeline(reason: "device gone"))
        #expect(machine.handle(.displayFailed(reason: "context lost"), at: Self.seconds(20))
                == .exitForRestart(reason: "context lost; the pipeline was rebuilt 2 times in 60 s"))
        // Outside the window the count starts again.
        #expect(machine.handle(.displayFailed(reason: "flip timed out"), at: Self.seconds(100)) == .rebuildPipeline(reason: "flip timed out"))
        #expect(machine.rebuildFailed(reason: "no DRM device") == .exitForRestart(reason: "rebuilding the pipeline failed: no DRM device"))
    }
}
