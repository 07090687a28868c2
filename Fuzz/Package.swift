// swift-tools-version: 5.4
// Vitrine's coverage-guided fuzz targets (libFuzzer): a package of its own, so that the
// sanitizer and coverage flags never reach the player's build. Build and run them with
// Fuzz/run.sh (docs/fuzzing.md); every module is compiled with -sanitize=fuzzer,address there.
//
// Tools version 5.4 on purpose: from 5.5 on, SwiftPM links an executable with `main` renamed
// to `<Target>_main` (so tests can link it), which a target whose `main` is libFuzzer's does
// not have. The code is still compiled in Swift 6 mode (swiftLanguageVersions below).

import PackageDescription

/// Each target defines `LLVMFuzzerTestOneInput` and no `main`: libFuzzer's is linked in.
func fuzzTarget(_ name: String, _ dependencies: [Target.Dependency]) -> Target {
    .executableTarget(
        name: name,
        dependencies: dependencies,
        swiftSettings: [.unsafeFlags(["-parse-as-library"])])
}

let package = Package(
    name: "VitrineFuzz",
    dependencies: [.package(name: "Vitrine", path: "..")],
    targets: [
        fuzzTarget("FuzzProbe", [
            .product(name: "MediaAsset", package: "Vitrine"),
            .product(name: "MediaTime", package: "Vitrine"),
        ]),
        fuzzTarget("FuzzScheduleTOML", ["ScheduleFuzzing"]),
        fuzzTarget("FuzzScheduleJSON", ["ScheduleFuzzing"]),
        fuzzTarget("FuzzBundleManifest", [.product(name: "Bundles", package: "Vitrine")]),
        fuzzTarget("FuzzMinisign", [.product(name: "Bundles", package: "Vitrine")]),
        fuzzTarget("FuzzConfig", [.product(name: "Config", package: "Vitrine")]),
        // What the two schedule targets share: validation and the programme, as `vitrine programme` does them.
        .target(
            name: "ScheduleFuzzing",
            dependencies: [
                .product(name: "Scheduling", package: "Vitrine"),
                .product(name: "MediaTime", package: "Vitrine"),
            ]),
    ],
    swiftLanguageVersions: [.version("6")]
)
