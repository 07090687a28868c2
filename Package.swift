// swift-tools-version: 6.1
// Vitrine: a boot-to-playback digital-signage player for Linux.
// Layers point one way; docs/architecture.md describes the modules, threads and lock order.

import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "Vitrine",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "vitrine", targets: ["VitrineCLI"]),
        .library(name: "MediaTime", targets: ["MediaTime"]),
        .library(name: "MediaAsset", targets: ["MediaAsset"]),
        .library(name: "Playback", targets: ["Playback"]),
        .library(name: "Displays", targets: ["Displays"]),
        .library(name: "Audio", targets: ["Audio"]),
        .library(name: "Scheduling", targets: ["Scheduling"]),
        .library(name: "ShowRunner", targets: ["ShowRunner"]),
        // For the fuzz targets in Fuzz/ (a package of its own that depends on this one).
        .library(name: "Config", targets: ["Config"]),
        .library(name: "Bundles", targets: ["Bundles"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.1.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/LebJe/TOMLKit.git", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.0.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.0.0", traits: []),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.24.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.0.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-system.git", from: "1.4.0"),
    ],
    targets: [
        // C libraries from Debian's -dev packages, each behind a shim header.
        .systemLibrary(
            name: "CFFmpeg", pkgConfig: "libavformat",
            providers: [.apt(["libavformat-dev", "libavcodec-dev", "libavutil-dev", "libswscale-dev", "libswresample-dev", "libavfilter-dev"])]),
        .systemLibrary(name: "CDRM", pkgConfig: "libdrm", providers: [.apt(["libdrm-dev", "libgbm-dev"])]),
        .systemLibrary(name: "CEGL", pkgConfig: "egl", providers: [.apt(["libegl-dev", "libgles-dev"])]),
        .systemLibrary(name: "CALSA", pkgConfig: "alsa", providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(name: "CFreeType", pkgConfig: "freetype2", providers: [.apt(["libfreetype-dev"])]),
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CSystemd", pkgConfig: "libsystemd", providers: [.apt(["libsystemd-dev"])]),

        .target(name: "MediaTime", dependencies: ["Threading"], swiftSettings: strict),
        // Named threads, ConditionLock<State, Condition>, thread ownership checks: the one threading toolkit.
        .systemLibrary(name: "CThreads"),
        // glibc's allocator: its statistics and malloc_trim, behind ProcessMemory.
        .systemLibrary(name: "CMemory"),
        .target(name: "ProcessMemory", dependencies: ["CMemory"], swiftSettings: strict),
        .target(name: "Threading", dependencies: ["CThreads"], swiftSettings: strict),
        // The sink interface: frames, buffers, the sink/source protocols, MediaError, null sinks.
        // Display and Audio depend on it instead of the engine.
        .target(
            name: "MediaSinks",
            dependencies: ["MediaTime", "Threading", .product(name: "DequeModule", package: "swift-collections")],
            swiftSettings: strict),
        .target(
            name: "MediaAsset",
            dependencies: ["CFFmpeg", "MediaTime", "MediaSinks", "Threading", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "Playback",
            dependencies: [
                "MediaAsset", "MediaSinks", "MediaTime", "ProcessMemory", "Threading",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ],
            swiftSettings: strict),
        .target(
            name: "Displays",
            dependencies: ["CDRM", "CEGL", "CFreeType", "MediaSinks", "MediaAsset", "MediaTime", "Threading", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "Audio",
            dependencies: ["CALSA", "MediaSinks", "MediaAsset", "MediaTime", "Threading", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        .target(
            name: "Scheduling",
            dependencies: ["MediaTime", "MediaSinks", "Threading"],
            swiftSettings: strict),
        .target(
            name: "ShowRunner",
            dependencies: [
                "Scheduling", "Playback", "Displays", "Audio", "MediaAsset", "MediaSinks", "MediaTime", "Threading",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // /etc/vitrine/vitrine.toml: the player's settings, checked like schedules.
        .target(name: "Config", dependencies: ["Scheduling", "MediaSinks"], swiftSettings: strict),
        // Living under a service manager: the restart policy applied to a show, sd_notify, the journal, the state file.
        .target(
            name: "Supervisor",
            dependencies: ["ShowRunner", "Scheduling", "MediaTime", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strict),
        // Schedule bundles from USB sticks: minisign signatures (libsodium), manifests, the atomic import.
        // SHA-256 comes from swift-crypto (BoringSSL's, with the CPU's SHA instructions): it bounds import speed.
        .target(name: "Bundles", dependencies: ["CSodium", "Threading", .product(name: "Crypto", package: "swift-crypto")], swiftSettings: strict),
        // Reading the systemd journal (sd-journal, libsystemd): the one module that touches CSystemd.
        .target(
            name: "SystemJournal",
            dependencies: ["CSystemd", "Threading", .product(name: "SystemPackage", package: "swift-system")],
            swiftSettings: strict),
        // The HTTP inspector: Hummingbird 2 on its own event loops, TLS through swift-nio-ssl.
        .target(
            name: "Inspector",
            dependencies: [
                "Threading", "SystemJournal",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTLS", package: "hummingbird"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "VitrineCLI",
            dependencies: [
                "MediaTime", "MediaAsset", "MediaSinks", "Playback", "Displays", "Audio", "Scheduling", "ShowRunner", "Config", "Supervisor", "Bundles", "Inspector", "SystemJournal", "Threading",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: strict),

        // Test support: child processes started with posix_spawn, shared by the test targets.
        .target(name: "ChildProcesses", dependencies: ["Threading"], path: "Tests/ChildProcesses", swiftSettings: strict),
        // Test support: sinks that record what the engine hands them, paced by a ManualClock.
        .target(name: "SinkDoubles", dependencies: ["MediaSinks", "MediaTime", "Threading"], path: "Tests/SinkDoubles", swiftSettings: strict),
        .testTarget(
            name: "MediaTimeTests",
            dependencies: ["MediaTime", "Threading", .product(name: "PropertyBased", package: "swift-property-based")]),
        .testTarget(name: "ThreadingTests", dependencies: ["Threading", "CThreads"]),
        .testTarget(name: "MediaAssetTests", dependencies: ["Threading", "MediaAsset", "MediaSinks", "MediaTime", "ChildProcesses"]),
        .testTarget(name: "PlaybackTests", dependencies: ["Threading", "Playback", "MediaAsset", "MediaSinks", "MediaTime", "SinkDoubles", "ChildProcesses"]),
        .testTarget(name: "DisplayTests", dependencies: ["Threading", "Displays", "Playback", "MediaAsset", "MediaSinks", "MediaTime", "ChildProcesses"]),
        .testTarget(name: "AudioTests", dependencies: ["Threading", "Audio", "Playback", "MediaAsset", "MediaSinks", "MediaTime", "ChildProcesses"]),
        .testTarget(
            name: "ScheduleTests",
            dependencies: [
                "Scheduling", "MediaSinks", "MediaTime", "ChildProcesses",
                .product(name: "PropertyBased", package: "swift-property-based"),
                // The reference parser for values on valid documents; kept out of the product (it pulls ICU).
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]),
        .testTarget(
            name: "ShowRunnerTests",
            dependencies: ["ProcessMemory", "Threading", "ShowRunner", "Scheduling", "Playback", "Displays", "MediaAsset", "MediaSinks", "MediaTime", "SinkDoubles", "ChildProcesses"]),
        .testTarget(name: "BundlesTests", dependencies: ["Bundles", "ChildProcesses", "Threading"]),
        .testTarget(name: "ConfigTests", dependencies: ["Config", "Scheduling", "MediaSinks"]),
        .testTarget(name: "SupervisorTests", dependencies: ["Supervisor", "ShowRunner", "Playback", "Displays", "SinkDoubles", "ChildProcesses", "Scheduling", "MediaTime", .product(name: "Logging", package: "swift-log")]),
        .testTarget(name: "SystemJournalTests", dependencies: ["SystemJournal", "ChildProcesses", .product(name: "SystemPackage", package: "swift-system")]),
        .testTarget(name: "VitrineCLITests", dependencies: ["Threading", "MediaTime", "ChildProcesses"]),
    ],
    swiftLanguageModes: [.v6]
)
