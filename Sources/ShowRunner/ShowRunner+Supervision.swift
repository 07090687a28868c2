import Dispatch
public import MediaTime
import Playback
import Scheduling

/// How a supervised show holds a failed or stalled item, and carries out what its supervisor
/// decides. Everything here runs on the show's queue.
extension ShowRunner {
    // MARK: The supervisor's answers

    /// Plays the held item again after `delay`: the queue empties now (the last good picture
    /// stays, without overlays), and at the time the programme is resolved afresh — the same item
    /// at its wall-clock position if its slot still runs, else whatever the programme says then —
    /// and queued alone until it presents. Logs `retry`.
    public func retry(attempt: Int, after delay: MediaTime) {
        queue.sync {
            guard case .deciding(_, let placement) = hold else { return }
            player.removeAllItems()
            hold = .waitingToRetry(placement, at: hostClock.now() + delay)
            log.event(.retry, time: nil, at: MonotonicClock().now(), detail: placement.programmeItem.description,
                      attempt: attempt, delay: delay)
            logger.warning("retrying \(placement.programmeItem) in \(MediaTime.format(seconds: delay.seconds, decimals: 3)) s (retry \(attempt))")
        }
    }

    /// Gives up on the held item: the show goes on with the next item at once. Logs `skip`.
    public func skip() {
        queue.sync {
            let held: (PlayerItem?, Placement)
            switch hold {
            case .none: return
            case .deciding(let item, let placement): held = (item, placement)
            case .waitingToRetry(let placement, _): held = (nil, placement)
            }
            hold = .none
            probation = nil
            log.event(.skip, time: nil, at: MonotonicClock().now(), detail: held.1.programmeItem.description,
                      reason: "its retries are spent", programme: (held.1.entryName, held.1.programmeItem))
            logger.error("skipping \(held.1.programmeItem)")
            if let item = held.0 { player.remove(item) }
            if fallbackRun == nil, player.items().isEmpty {
                // Nothing was queued behind it (it was a retry): the programme's next item follows.
                tailEnd = held.1.end ?? configuration.clock.now()
            }
            topUp()
            keepPlaying()
        }
    }

    /// Plays the schedule's fallback playlist from its first item until the winning entry
    /// changes. Without a fallback playlist the held item is skipped. Logs `fallback`.
    public func playFallback(reason: String) {
        let skipInstead: Bool = queue.sync {
            guard let name = schedule.fallbackPlaylist, let playlist = schedule.playlists[name], !playlist.items.isEmpty else {
                logger.error("no fallback playlist to play (\(reason)): skipping instead")
                return true
            }
            hold = .none
            probation = nil
            let wanted = key(resolver.winner(at: configuration.clock.now()))
            fallbackRun = FallbackRun(entryKey: wanted, playlist: name, next: 0)
            log.event(.fallback, time: nil, at: MonotonicClock().now(), detail: name, reason: reason)
            logger.error("playing the fallback playlist \(name) until the next entry change: \(reason)")
            player.removeAllItems()
            topUp()
            keepPlaying()
            return false
        }
        if skipInstead { skip() }
    }

    // MARK: On the queue

    /// Sends a report to the supervisor, if there is one.
    func report(_ report: ShowReport) {
        guard !stopped else { return }
        reports?.yield(report)
    }

    /// Whether `placement` belongs to the held or retried item (kept while it is out of the queue).
    func isHeld(_ placement: Placement) -> Bool {
        switch hold {
        case .none: false
        case .deciding(_, let held), .waitingToRetry(let held, _): held.programmeItem == placement.programmeItem && held.start == placement.start
        }
    }

    /// The engine reported that `item` failed: if it is the current one, hold it and ask.
    func itemFailed(_ item: PlayerItem, reason: String) {
        guard !stopped, case .none = hold, player.currentItem === item, let placement = placements[ObjectIdentifier(item)] else { return }
        hold = .deciding(item, placement)
        probation = nil
        watch = nil
        log.event(.showItemFailed, time: nil, at: MonotonicClock().now(), detail: placement.programmeItem.description, reason: reason,
                  programme: (placement.entryName, placement.programmeItem))
        logger.error("\(placement.programmeItem) failed: \(reason)")
        report(.itemFailed(placement.programmeItem, reason: reason))
    }

    /// The supervised part of a tick; returns true when it handled the tick (the show holds).
    func supervisedStep(wanted: String, now: UTCInstant) -> Bool {
        switch hold {
        case .deciding(_, let placement):
            if placement.entryKey != wanted { entryChangedWhileHeld(at: now) }
            return true
        case .waitingToRetry(let placement, let at):
            if placement.entryKey != wanted {
                entryChangedWhileHeld(at: now)
            } else if hostClock.now() >= at {
                retryNow(placement, at: now)
            }
            return true
        case .none:
            break
        }
        if let run = fallbackRun {
            if run.entryKey != wanted {
                rebuild(at: now)
                report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
            } else {
                topUp()
            }
            watchProgress()
            return true
        }
        watchProgress()
        if case .none = hold {} else { return true }
        if let probation, player.currentItem.map(ObjectIdentifier.init) != probation {
            // The retried item is gone (it ended): the programme goes on.
            self.probation = nil
        }
        return false
    }

    private func entryChangedWhileHeld(at now: UTCInstant) {
        rebuild(at: now)
        report(.entryChanged(currentEntryNameOnQueue ?? "nothing"))
    }

    /// The retry's time has come: the same item plays again, alone until it presents — where its
    /// slot is now (from its start if the show ran ahead of the wall clock after a skip). When
    /// its slot is over, the programme for now plays instead.
    private func retryNow(_ placement: Placement, at now: UTCInstant) {
        hold = .none
        if let run = fallbackRun {
            // A fallback item is tried again from its start.
            let made = fallbackItem(run.playlist, index: placement.programmeItem.index, entryKey: run.entryKey, at: now)
            if let made { player.replaceCurrentItem(with: made) }
        } else if let end = placement.end, now >= end {
            rebuild(at: now, alone: true)
            return
        } else if let media = schedule.playlists[placement.programmeItem.playlist]?.items[safe: placement.programmeItem.index] {
            let position = placement.start < now ? now.since(placement.start) : .zero
            let item = ShowItems.playerItem(for: media, withSound: hasSound, from: position)
            register(item, media: media, placement: placement)
            player.replaceCurrentItem(with: item)
            tailEnd = placement.end
        } else {
            rebuild(at: now, alone: true)
            return
        }
        probation = player.currentItem.map(ObjectIdentifier.init)
    }

    /// Keeps the fallback playlist queued, item after item, looping.
    func topUpFallback() {
        guard var run = fallbackRun, let count = schedule.playlists[run.playlist]?.items.count, count > 0 else { return }
        let now = configuration.clock.now()
        while player.items().count < 3 {
            let index = run.next % count
            run.next = index + 1
            guard let item = fallbackItem(run.playlist, index: index, entryKey: run.entryKey, at: now) else { break }
            player.insert(item, after: nil)
        }
        fallbackRun = run
    }

    private func fallbackItem(_ playlist: String, index: Int, entryKey: String, at now: UTCInstant) -> PlayerItem? {
        guard let media = schedule.playlists[playlist]?.items[safe: index] else { return nil }
        let item = ShowItems.playerItem(for: media, withSound: hasSound)
        register(item, media: media, placement: Placement(
            entryKey: entryKey, entryName: "fallback", start: now, end: nil,
            programmeItem: ProgrammeItem(playlist: playlist, index: index, source: media.source.location), isStill: media.source.isStill))
        return item
    }

    /// Sees the current item present (reported once: its counts start over) or stall (held and
    /// reported). Waiting for data counts from when it was first seen waiting; a pause, a held
    /// last frame and a still picture never count.
    private func watchProgress() {
        guard let item = player.currentItem, let placement = placements[ObjectIdentifier(item)] else {
            watch = nil
            return
        }
        let id = ObjectIdentifier(item)
        if watch?.item != id { watch = ProgressWatch(item: id) }
        let host = hostClock.now()
        switch player.timeControlStatus {
        case .playing:
            if watch?.played == false {
                watch?.played = true
                if probation == id {
                    probation = nil
                    topUp()
                }
                report(.itemPlaying(placement.programmeItem))
            }
            watch?.waitingSince = nil
        case .waitingToPlayAtSpecifiedRate(.toMinimizeStalls) where !placement.isStill:
            guard let since = watch?.waitingSince else {
                watch?.waitingSince = host
                return
            }
            let limit = watch?.played == true ? configuration.stallTimeout : configuration.firstFrameTimeout
            let waited = host - since
            guard waited >= limit else { return }
            hold = .deciding(item, placement)
            probation = nil
            watch = nil
            log.event(.stall, time: nil, at: MonotonicClock().now(), detail: placement.programmeItem.description,
                      reason: "no new frame for \(MediaTime.format(seconds: waited.seconds, decimals: 1)) s", delay: waited)
            logger.error("\(placement.programmeItem) stalled: no new frame for \(MediaTime.format(seconds: waited.seconds, decimals: 1)) s")
            report(.itemStalled(placement.programmeItem, waited: waited))
        default:
            watch?.waitingSince = nil
        }
    }
}

extension Array {
    subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
