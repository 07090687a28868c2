import MediaSinks
import MediaTime

/// What the video sink shows at each refresh, what it reports presented, and how items end.
extension EngineState {
    /// The content for the refresh at `tick` (nil: nothing changes), with `reading` the audio
    /// output's clock reading taken just before.
    mutating func content(
        for tick: RefreshTick, reading: AudioClockReading?, into effects: inout EngineEffects, depth: Int = 0
    ) -> VideoSinkContent? {
        guard !invalidated, let item = items.first, depth < 8 else { return nil }
        if item.status == .failed {
            if actionAtItemFailure == .hold {
                // Held for the owner to decide: announced once, then nothing changes on screen.
                if phase != .ended {
                    phase = .ended
                    holdingFailure = true
                    effects.emit(.failedToPlayToEndTime(item, item.error ?? MediaError.playback(item.url, "cannot play", .other)))
                }
                return nil
            }
            effects.emit(.failedToPlayToEndTime(item, item.error ?? MediaError.playback(item.url, "cannot play", .other)))
            items.removeFirst()
            effects.actions.append(.release(item))
            becomeCurrent(into: &effects)
            prepareUpcoming(into: &effects)
            return content(for: tick, reading: reading, into: &effects, depth: depth + 1)
        }
        guard item.status == .readyToPlay, let pipeline = item.pipeline, phase != .ended else { return nil }
        checkPrerolls(item, pipeline: pipeline, into: &effects)

        let wall = wallTime(at: tick.hostTime)
        let needsFirst = phase.needsFirstFrame
        let running = clock.rate > 0
        // A timeline that starts on its pin: the display clock is anchored where the pin puts
        // this refresh (holding before the pin's instant), whatever frame was decoded first.
        var snapped = false
        if needsFirst, running, snapsToPin, let pin, let pinHost = pin.hostTime(seenFrom: tick.hostTime, wall: wall) {
            clock.anchor(host: pinHost, media: pin.time)
            snapped = true
            if lateStartSought(pipeline: pipeline, item: item, tick: tick, wall: wall, into: &effects) { return nil }
        }

        // The master clock at this refresh: the sound once it has joined the picture.
        let feed = clock.rate == 1 && pipeline.audioEnabled ? audio.feed(for: item) : nil
        var audioClock: MediaTime?
        if let feed, let reading {
            let extrapolated = reading.mediaTime + max(.zero, tick.hostTime - reading.hostTime) - feed.offset
            let drained = pipeline.audioFinished && extrapolated >= feed.end
            if !drained {
                let picture = needsFirst && !snapped ? nil : clock.displayTime(at: tick.hostTime)
                let firstSample = audio.firstSample ?? reading.mediaTime
                let wasJoined = audioJoin.isJoined
                switch audioJoin.update(reading: reading, heard: extrapolated, picture: picture, firstSample: firstSample, at: tick.hostTime) {
                case .useAudio:
                    audioClock = extrapolated
                    if !wasJoined {
                        // The follower's adjustment moves from the display clock to the sound.
                        clock.setTrim(0, at: tick.hostTime)
                        compensateAudio(follower.adjustment, pipeline: pipeline, into: &effects)
                        effects.log(.audioJoined, itemIndex: itemIndex, source: item.url, time: extrapolated, at: tick.hostTime,
                                    wallClock: wall)
                    }
                case .useDisplay:
                    if wasJoined { clock.setTrim(follower.adjustment, at: tick.hostTime) }
                case .align(let picture):
                    effects.actions.append(.alignAudio(mediaTime: picture + feed.offset, hostTime: tick.hostTime))
                }
            }
        }
        let held = clock.heldTime
        let time = clock.read(atRefresh: tick.hostTime, audioClock: audioClock) {
            // The display clock starts at the first frame after a new start, else where it held.
            needsFirst ? pipeline.withVideoFrames({ $0.first })?.presentationTime ?? held : held
        }

        var syncError: MediaTime?
        if running && !needsFirst && phase == .playing && seeks.isEmpty {
            syncError = follow(time: time, audioClock: audioClock, pipeline: pipeline, item: item, tick: tick, wall: wall, into: &effects)
        }

        // The latest frame whose time has come; earlier ones are dropped, never shown out of order.
        // A timeline that starts inside the item (joining its pin late, a seek landing between
        // frames) skips what lies before its start: those frames were never due on screen, so
        // they are not counted; after a stall they were, and are.
        var dropped = 0
        let starting = if case .awaitingFirstFrame = phase { true } else { false }
        let chosen: DecodedVideoFrame? = pipeline.withVideoFrames { queue in
            var chosen: DecodedVideoFrame?
            if needsFirst { chosen = queue.popFirst() }
            while let next = queue.first, next.presentationTime <= time, running || chosen == nil {
                if chosen != nil && !starting { dropped += 1 }
                chosen = queue.popFirst()
            }
            return chosen
        }
        droppedFrames += dropped
        if let chosen {
            videoStarved = false
            let isJump = phase == .awaitingFirstFrame(jump: true)
            phase = .playing
            handedEnd = chosen.end
            if running && needsFirst && audioClock == nil && !snapped { clock.anchor(host: tick.hostTime, media: chosen.presentationTime) }
            if needsFirst { startTimeline(at: snapped || audioClock != nil ? time : chosen.presentationTime, tick: tick, wall: wall) }
            let subtitle = pipeline.subtitle(at: chosen.presentationTime)
            handedSubtitle = subtitle?.start
            let id = handOut(Pending(
                item: item, itemIndex: itemIndex, presentationTime: chosen.presentationTime, serial: chosen.serial, isJump: isJump,
                clock: needsFirst && audioClock == nil ? chosen.presentationTime : time, audioClock: audioClock, syncError: syncError))
            return VideoSinkContent(frameID: id, frame: chosen.frame, subtitle: subtitle?.content)
        }
        // The picture stays; the subtitle may still change between frames.
        let subtitle = pipeline.subtitle(at: time)
        if subtitle?.start != handedSubtitle, handedEnd != nil {
            handedSubtitle = subtitle?.start
            let id = handOut(Pending(
                item: item, itemIndex: itemIndex, presentationTime: time, serial: pipeline.serial, isJump: false,
                clock: time, audioClock: audioClock, isFrame: false))
            return VideoSinkContent(frameID: id, frame: nil, subtitle: subtitle?.content)
        }

        guard running else { return nil }
        // Nothing new: has the item ended, or stalled?
        let hasVideo = item.hasVideo
        let videoDone = pipeline.videoFinished
        let shownEnd = handedEnd ?? .zero
        let ended: Bool
        if hasVideo {
            // Following the wall clock, the item also ends where its pin puts its end: a sound a
            // few milliseconds behind (still being eased in) must not hold the seam a refresh.
            func pinReachedEnd() -> Bool {
                guard case .wallClock = sourceClock, let pinned = pin?.reference(atHost: tick.hostTime, wall: wall, rate: clock.rate) else { return false }
                return pinned >= shownEnd
            }
            ended = videoDone && (handedEnd == nil || time >= shownEnd || pinReachedEnd())
        } else if let feed {
            ended = pipeline.audioFinished && (audioClock == nil || time >= feed.end)
        } else {
            ended = false
        }
        if ended {
            endItem(item, failure: pipeline.playbackFailure, time: time, tick: tick, into: &effects)
            if phase == .ended { return nil }
            return content(for: tick, reading: reading, into: &effects, depth: depth + 1)
        }
        let starving = hasVideo && !videoDone && time >= shownEnd && handedEnd != nil
        let newlyStarved = starving && !videoStarved
        if starving { videoStarved = true }
        if starving && phase != .stalled && audioClock == nil && waitsToMinimizeStalling {
            // Out of frames: freeze the video clock until the next frame arrives (a timeline
            // pinned on the wall clock starts on its pin again, late frames dropped).
            phase = .stalled
            clock.hold(at: shownEnd)
            if case .wallClock = sourceClock, pin != nil { snapsToPin = true }
            effects.emit(.playbackStalled(item))
            effects.log(.stalled, itemIndex: itemIndex, source: item.url, time: shownEnd, at: tick.hostTime)
        } else if newlyStarved && audioClock == nil && !waitsToMinimizeStalling {
            // Not waiting: the clock runs on through the gap, and the frames that come late are
            // dropped up to the one due, as with an audio clock.
            effects.emit(.playbackStalled(item))
            effects.log(.stalled, itemIndex: itemIndex, source: item.url, time: shownEnd, at: tick.hostTime)
        }
        return nil
    }

    /// An item starting on a pin that passed well before its frames were decoded (an interrupt
    /// found at a reload, an item slow to open): when even the newest decoded frame ended more
    /// than the seek threshold before where the pin is now, rather than show a stale frame and
    /// drop the rest on the way, seek onto the pin as the follower does. The last picture stays
    /// meanwhile. Returns whether it sought.
    private mutating func lateStartSought(
        pipeline: ItemPipeline, item: PlayerItem, tick: RefreshTick, wall: MediaTime?, into effects: inout EngineEffects
    ) -> Bool {
        guard phase == .awaitingFirstFrame(jump: false), syncSeekSince == nil, item.hasVideo,
              let newest = pipeline.withVideoFrames({ $0.last }),
              let reference = pin?.reference(atHost: tick.hostTime, wall: wall, rate: clock.rate),
              reference - newest.end > follower.policy.seekThreshold else { return false }
        requestSyncSeek(item, reference: reference, error: newest.end - reference, tick: tick, wall: wall, into: &effects)
        return true
    }

    /// Records content handed to the sink; returns its frame id.
    private mutating func handOut(_ content: Pending) -> UInt64 {
        let id = nextFrameID
        nextFrameID += 1
        pending[id] = content
        return id
    }

    /// The current item played to its end (or as far as it could: `failure`).
    mutating func endItem(_ item: PlayerItem, failure: MediaError?, time: MediaTime, tick: RefreshTick, into effects: inout EngineEffects) {
        let endTime = handedEnd ?? time
        // Reading stopped on an error (not at the end of the input), or a decoder rejected every
        // packet up to the end: what was decoded has been shown, and the item failed to play to
        // its end. A clean end of file — even one FFmpeg reached early in a cut file — is a
        // normal end.
        if let failure {
            effects.emit(.failedToPlayToEndTime(item, failure))
        } else {
            effects.emit(.didPlayToEndTime(item))
        }
        // Marks past the last frame (at the end) fire when the item ends.
        for (observer, mark) in observers.boundaries(after: lastPresented ?? .negativeInfinity, through: endTime) {
            effects.actions.append(.invoke(observer, at: mark))
            effects.log(.boundaryCrossed, itemIndex: itemIndex, source: item.url, time: mark, at: tick.hostTime)
        }
        effects.log(.itemEnded, itemIndex: itemIndex, source: item.url, time: endTime, at: tick.hostTime, reason: failure?.description)
        if failure != nil && actionAtItemFailure == .hold {
            // The last picture stays; the owner decides what comes next.
            phase = .ended
            holdingFailure = true
            clock.hold(at: endTime)
            return
        }
        switch actionAtItemEnd {
        case .advance:
            items.removeFirst()
            effects.actions.append(.release(item))
            becomeCurrent(gapless: true, into: &effects)
            prepareUpcoming(into: &effects)
            if items.isEmpty { phase = .ended }
        case .pause:
            phase = .ended
            if clock.rate != 0 {
                clock.stop(at: endTime)
                observers.jumped(to: endTime, into: &effects)
                effects.emit(.rateChanged(0))
                effects.actions.append(.pauseAudio(true))
            } else {
                clock.hold(at: endTime)
            }
        case .none:
            phase = .ended
            clock.hold(at: endTime)
        }
    }

    /// The content with `frameID` is on screen since `tick`.
    mutating func didPresent(frameID: UInt64, at tick: RefreshTick, wallClockTime: MediaTime?, into effects: inout EngineEffects) {
        guard let presented = pending.removeValue(forKey: frameID), presented.isFrame else { return }
        // Content handed out but never presented was replaced: it counts as dropped.
        let skipped = pending.filter { $0.key < frameID }
        for key in skipped.keys { pending[key] = nil }
        droppedFrames += skipped.values.filter(\.isFrame).count
        if effects.handler != nil {
            effects.records.append(.frame(PresentedFrame(
                itemIndex: presented.itemIndex, source: presented.item.url, presentationTime: presented.presentationTime,
                presentedAt: tick.hostTime, refresh: tick.sequence, clock: presented.clock, audioClock: presented.audioClock,
                droppedFrames: droppedFrames, presentedWallClockTime: wallClockTime, syncError: presented.syncError)))
        }
        let item = presented.item
        guard items.first === item, presented.itemIndex == itemIndex, presented.serial == item.pipeline?.serial else { return }
        let time = presented.presentationTime
        // Seeks complete on their first presented frame.
        if let seek = seeks.first, seek.item === item, seek.serial <= presented.serial {
            if let since = syncSeekSince {
                // How long the follower's seek took: its next one aims about that far ahead.
                seekLatency.record(took: tick.hostTime - since)
                syncSeekSince = nil
            }
            let finished = seeks
            seeks.removeAll()
            for request in finished {
                if let completion = request.completion { effects.actions.append(.complete(completion, finished: true)) }
                effects.emit(.seekCompleted(item, request.target, finished: true))
                effects.log(.seekDone, itemIndex: presented.itemIndex, source: item.url, time: time, at: tick.hostTime)
            }
        }
        if lastPresented == nil && !presented.isJump {
            effects.log(.itemReady, itemIndex: presented.itemIndex, source: item.url, time: time, at: tick.hostTime)
        }
        if presented.isJump {
            observers.jumped(to: time, into: &effects)
        } else {
            // Boundaries: the first presented frame at or past each mark, in normal playback.
            for (observer, mark) in observers.boundaries(after: lastPresented ?? .negativeInfinity, through: time) {
                effects.actions.append(.invoke(observer, at: mark))
                effects.log(.boundaryCrossed, itemIndex: presented.itemIndex, source: item.url, time: mark, at: tick.hostTime)
            }
            if clock.rate > 0 { observers.advanced(to: time, into: &effects) }
        }
        lastPresented = time
    }

    // MARK: Following a clock

    /// The current item's timeline started with a frame at media time `time`, at `tick`: a
    /// timeline that follows the display or the wall clock and has no pin yet is pinned there.
    private mutating func startTimeline(at time: MediaTime, tick: RefreshTick, wall: MediaTime?) {
        snapsToPin = false
        follower.restart()
        guard pin == nil else { return }
        switch sourceClock {
        case .wallClock: pin = wall.map { .wall(time: time, wall: $0) }
        case .display: pin = .host(time: time, host: tick.hostTime)
        case .audioOutput: break
        }
    }

    /// Measures how far the playback clock (`time`) is from the reference this refresh and lets the
    /// follower decide: nothing, a small change of speed, or a seek.
    /// Returns the error measured (nil when there is nothing to follow).
    @discardableResult
    private mutating func follow(
        time: MediaTime, audioClock: MediaTime?, pipeline: ItemPipeline, item: PlayerItem, tick: RefreshTick, wall: MediaTime?,
        into effects: inout EngineEffects
    ) -> MediaTime? {
        let reference: MediaTime?
        switch sourceClock {
        case .audioOutput: reference = nil
        // The display drives: only sound has something to follow.
        case .display: reference = audioClock == nil ? nil : pin?.reference(atHost: tick.hostTime, wall: nil, rate: clock.rate)
        case .wallClock: reference = pin?.reference(atHost: tick.hostTime, wall: wall, rate: clock.rate)
        }
        // Nothing to follow before the pin's instant: the timeline holds on its first frame until then.
        guard let reference, syncSeekSince == nil, reference >= (pin?.time ?? reference) else { return nil }
        let error = time - reference
        switch follower.measure(error: error.seconds, at: tick.hostTime) {
        case .none:
            break
        case .adjust(let adjustment, let log):
            if audioClock != nil {
                compensateAudio(adjustment, pipeline: pipeline, into: &effects)
            } else {
                clock.setTrim(adjustment, at: tick.hostTime)
            }
            if log {
                effects.log(.syncAdjust, itemIndex: itemIndex, source: item.url, time: time, at: tick.hostTime,
                            error: error, adjustment: adjustment, wallClock: wall)
            }
        case .seek:
            requestSyncSeek(item, reference: reference, error: error, tick: tick, wall: wall, into: &effects)
        }
        return error
    }

    /// Seeks `item` to where the pinned `reference` will be once the seek has shown its first
    /// frame (the last measured seek latency ahead): the timeline then starts on the pin, so a
    /// latency guessed wrong costs a few frames dropped or the first one held, not a lasting
    /// error. Logs `sync-seek` with the `error` that called for it.
    private mutating func requestSyncSeek(
        _ item: PlayerItem, reference: MediaTime, error: MediaTime, tick: RefreshTick, wall: MediaTime?, into effects: inout EngineEffects
    ) {
        let target = reference + seekLatency.aim.multiplied(by: max(clock.rate, 0.25))
        syncSeekSince = tick.hostTime
        effects.actions.append(.syncSeek(item, target: target))
        effects.log(.syncSeek, itemIndex: itemIndex, source: item.url, time: target, at: tick.hostTime, error: error, wallClock: wall)
    }

    /// Hands the follower's adjustment to the current item's sound (resampled by that much).
    private mutating func compensateAudio(_ adjustment: Double, pipeline: ItemPipeline, into effects: inout EngineEffects) {
        guard adjustment != audioCompensation else { return }
        audioCompensation = adjustment
        effects.actions.append(.compensateAudio(pipeline, adjustment))
    }

    /// Completes the prerolls of the current item that are ready: its first frame (after any
    /// seek) decoded, its sound primed.
    mutating func checkPrerolls(_ item: PlayerItem, pipeline: ItemPipeline, into effects: inout EngineEffects) {
        guard !prerolls.isEmpty, seeks.isEmpty || !pipeline.withVideoFrames({ $0.isEmpty }) else { return }
        let primed = (!item.hasVideo || !pipeline.withVideoFrames { $0.isEmpty } || pipeline.videoFinished)
        guard primed else { return }
        let ready = prerolls.filter { $0.item === item }
        prerolls.removeAll { $0.item === item }
        for waiter in ready { effects.actions.append(.complete(waiter.completion, finished: true)) }
    }

    /// Ends the prerolls of items other than `current` (no longer current): they did not finish.
    mutating func cancelPrerolls(except current: PlayerItem?, into effects: inout EngineEffects) {
        for waiter in prerolls where waiter.item !== current { effects.actions.append(.complete(waiter.completion, finished: false)) }
        prerolls.removeAll { $0.item !== current }
    }

    /// Whether pulling at the next refresh would find data missing that is on its way: sinks
    /// driven by a manual clock wait while this holds, so decode speed never changes what is shown.
    /// `audioLevel` is the sound sink's (what is queued and how much it holds at most),
    /// `refreshInterval` the video sink's.
    func isWaitingForData(
        at now: MediaTime, audioLevel: (queued: MediaTime, capacity: MediaTime)?, refreshInterval: MediaTime?
    ) -> Bool {
        guard !invalidated, phase != .ended, let item = items.first else { return false }
        switch item.status {
        case .failed: return false
        case .unknown: return true
        case .readyToPlay: break
        }
        guard let pipeline = item.pipeline else { return false }
        if clock.rate == 0 {
            return phase.needsFirstFrame && pipeline.withVideoFrames({ $0.isEmpty }) && !pipeline.videoFinished
        }
        if item.hasVideo && !pipeline.videoDecodeFinished {
            let (count, newest) = pipeline.withVideoFrames { ($0.count, $0.last?.presentationTime) }
            if count == 0 { return true }
            // A later frame may be due at the coming refresh: wait for the queue to fill so
            // the pick (the latest frame whose time has come) does not depend on decode speed.
            // A timeline about to start on its pin is due where the pin puts it, not where the
            // display clock held.
            let pinned = phase.needsFirstFrame && snapsToPin ? pin?.reference(atHost: now, wall: wallTime(at: now), rate: clock.rate) : nil
            if count < ItemPipeline.videoFrameCapacity, let due = pinned ?? clock.displayTime(at: now), let newest, newest <= due {
                pipeline.wantVideoFrames()  // a decoder refilling in bursts would wait for the queue to run low
                return true
            }
        }
        if clock.rate == 1 && pipeline.audioEnabled {
            // Enough sound to play until the next refresh and 100 ms more, or as much as the sink
            // holds: a sink that ran dry between two refreshes (a 5 Hz display plays 200 ms each)
            // would fall behind the picture by what the decoder was slow to give. Past the item's
            // last sample, the next item's sound follows it in the sink (a seam): wait for that too.
            let low = audioLevel.map { level in
                level.queued < min(MediaTime(value: 1, timescale: 10) + (refreshInterval ?? .zero),
                                   level.capacity.multiplied(byRatio: 9, over: 10))
            } ?? false
            if !pipeline.audioFinished {
                if audio.feed(for: item) == nil || low { return true }
            } else if low, let next = items.dropFirst().first(where: { $0.status != .failed }) {
                if next.status == .unknown { return true }
                if let nextPipeline = next.pipeline, nextPipeline.audioEnabled, !nextPipeline.audioFinished { return true }
            }
        }
        if item.hasVideo && pipeline.videoFinished, let next = items.dropFirst().first(where: { $0.status != .failed }) {
            if next.status == .unknown { return true }
            if let nextPipeline = next.pipeline, next.hasVideo, nextPipeline.withVideoFrames({ $0.isEmpty }),
               !nextPipeline.videoDecodeFinished {
                return true
            }
        }
        return false
    }
}
