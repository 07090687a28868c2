import Dispatch
import Glibc
import MediaAsset
import MediaTime

/// The probe path on mutated media: an `Asset` opened on the input, every property loaded (what
/// `vitrine probe --json` prints), then the first picture decoded (what `vitrine thumbnails` and the
/// validator's probe do). It must end in values or a `MediaError` naming the file, never a crash,
/// a leak or a hang. FFmpeg opens files, so the input is written to one file in /dev/shm (memory,
/// not disk), made once per process and rewritten for every input.
let path: String = {
    var status = stat()
    let directory = stat("/dev/shm", &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR ? "/dev/shm" : "/tmp"
    atexit { unlink(path) }
    return "\(directory)/vitrine-fuzz-probe-\(getpid())"
}()

func write(_ data: UnsafePointer<UInt8>, _ size: Int) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
    precondition(descriptor >= 0, "cannot write \(path): errno \(errno)")
    var written = 0
    while written < size {
        let count = Glibc.write(descriptor, data + written, size - written)
        precondition(count > 0, "cannot write \(path): errno \(errno)")
        written += count
    }
    close(descriptor)
}

/// The last input's asset, watched until it is gone: the loading and decoding threads may still
/// hold it for a moment after the awaited calls return, and a check for leaks made then would see
/// its weak-reference side table, which only the object points to (in an encoded form), as leaked.
nonisolated(unsafe) weak var lastAsset: Asset?

/// Opens, loads and decodes; returns when everything has ended.
func probe(exact: Bool) async {
    let asset = Asset(pathOrURL: path, options: .init(openTimeout: .seconds(5), readTimeout: .seconds(5)))
    lastAsset = asset
    do {
        let (format, duration, tracks, metadata, common, formats, groups, playable) = try await asset.load(
            .containerFormat, .duration, .tracks, .metadata, .commonMetadata, .availableMetadataFormats,
            .mediaSelectionGroups, .isPlayable)
        _ = (format, duration, metadata, common, formats, groups, playable)
        guard tracks.contains(where: { $0.mediaType == .video && $0.isDecodable && !$0.isAttachedPicture }) else { return }
        let generator = AssetImageGenerator(asset: asset)
        generator.maximumSize = PixelSize(width: 160, height: 0)
        var time = MediaTime.zero
        if exact {  // the exact path decodes past the keyframe
            generator.requestedTimeToleranceBefore = .zero
            generator.requestedTimeToleranceAfter = .zero
            time = MediaTime(value: 1, timescale: 2)
        }
        do {
            _ = try await generator.image(at: time)
        } catch {
            precondition(error.description.hasPrefix(path), "a decode error that does not name the file: \(error)")
        }
    } catch {
        precondition(error.description.hasPrefix(path), "a load error that does not name the file: \(error)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    write(data, size)
    let done = DispatchSemaphore(value: 0)
    let exact = size % 3 == 0
    Task.detached {
        await probe(exact: exact)
        done.signal()
    }
    done.wait()
    // Every object of this input must be released before the next one (or a leak check) starts;
    // an asset still alive after 5 s is a leak (a cycle, or a thread that never ends).
    var waited = 0
    while lastAsset != nil {
        precondition(waited < 5_000, "the asset outlived its input by 5 s: a reference cycle or a stuck thread")
        usleep(1_000)
        waited += 1
    }
    return 0
}
