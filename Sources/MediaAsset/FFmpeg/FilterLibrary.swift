internal import CFFmpeg
import MediaSinks
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// libavfilter, opened the first time a filter graph is needed (an ``AudioPlayer``'s tempo), not
/// when the process starts.
///
/// Linked, it brought ~30 of the process's ~190 shared libraries (speech synthesis, Vulkan,
/// LAPACK…) for one filter: their loading and every symbol lookup through them cost each start
/// ~25 ms, and slowed each later `dlopen` (Mesa's driver and LLVM) as well. The functions used are
/// resolved once from the library FFmpeg's headers name (`libavfilter.so.<major>`).
struct FilterLibrary: Sendable {
    typealias Graph = UnsafeMutablePointer<AVFilterGraph>
    typealias Context = UnsafeMutablePointer<AVFilterContext>
    typealias GraphAlloc = @convention(c) () -> Graph?
    typealias GraphFree = @convention(c) (UnsafeMutablePointer<Graph?>?) -> Void
    typealias FilterByName = @convention(c) (UnsafePointer<CChar>?) -> UnsafePointer<AVFilter>?
    typealias GraphCreateFilter = @convention(c) (
        UnsafeMutablePointer<Context?>?, UnsafePointer<AVFilter>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafeMutableRawPointer?, Graph?
    ) -> Int32
    typealias Link = @convention(c) (Context?, UInt32, Context?, UInt32) -> Int32
    typealias GraphConfig = @convention(c) (Graph?, UnsafeMutableRawPointer?) -> Int32
    typealias FrameTransfer = @convention(c) (Context?, UnsafeMutablePointer<AVFrame>?) -> Int32

    /// `avfilter_graph_alloc`, `avfilter_graph_free`, `avfilter_get_by_name`, `avfilter_graph_create_filter`,
    /// `avfilter_link`, `avfilter_graph_config`, `av_buffersink_get_frame`, `av_buffersrc_add_frame`.
    let graphAlloc: GraphAlloc
    let graphFree: GraphFree
    let filterByName: FilterByName
    let graphCreateFilter: GraphCreateFilter
    let link: Link
    let graphConfig: GraphConfig
    let sinkGetFrame: FrameTransfer
    let sourceAddFrame: FrameTransfer

    /// The library's file name, as the dynamic linker would have looked it up.
    static let fileName = "libavfilter.so.\(LIBAVFILTER_VERSION_MAJOR)"

    /// The library, loaded on first use (and kept: it is never unloaded); the error says what was missing.
    static let shared: Result<FilterLibrary, MediaError> = load()

    private static func load() -> Result<FilterLibrary, MediaError> {
        func failure(_ detail: String) -> MediaError {
            MediaError(source: "audio", operation: "cannot load \(fileName)", reason: .other, detail: detail)
        }
        guard let handle = dlopen(fileName, RTLD_NOW | RTLD_LOCAL) else {
            return .failure(failure(dlerror().map { String(cString: $0) } ?? "dlopen failed"))
        }
        var missing: [String] = []
        func symbol<Function>(_ name: String, _ type: Function.Type) -> Function? {
            guard let address = dlsym(handle, name) else {
                missing.append(name)
                return nil
            }
            return unsafeBitCast(address, to: type)
        }
        guard let graphAlloc = symbol("avfilter_graph_alloc", GraphAlloc.self),
              let graphFree = symbol("avfilter_graph_free", GraphFree.self),
              let filterByName = symbol("avfilter_get_by_name", FilterByName.self),
              let graphCreateFilter = symbol("avfilter_graph_create_filter", GraphCreateFilter.self),
              let link = symbol("avfilter_link", Link.self),
              let graphConfig = symbol("avfilter_graph_config", GraphConfig.self),
              let sinkGetFrame = symbol("av_buffersink_get_frame", FrameTransfer.self),
              let sourceAddFrame = symbol("av_buffersrc_add_frame", FrameTransfer.self)
        else {
            return .failure(failure("missing \(missing.joined(separator: ", "))"))
        }
        return .success(FilterLibrary(
            graphAlloc: graphAlloc, graphFree: graphFree, filterByName: filterByName, graphCreateFilter: graphCreateFilter,
            link: link, graphConfig: graphConfig, sinkGetFrame: sinkGetFrame, sourceAddFrame: sourceAddFrame))
    }
}
