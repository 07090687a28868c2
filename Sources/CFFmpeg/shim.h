// FFmpeg (libavformat, libavcodec, libavutil, libswscale, libswresample linked; libavfilter's types only: it is
// loaded when first needed, see MediaAsset/FFmpeg/FilterLibrary.swift)
// for Swift. Macros Swift cannot import are wrapped in static inline functions.
#ifndef VITRINE_CFFMPEG_SHIM_H
#define VITRINE_CFFMPEG_SHIM_H

#include <errno.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/display.h>
#include <libavutil/error.h>
#include <libavutil/imgutils.h>
#include <libavutil/log.h>
#include <libavutil/opt.h>
#include <libavutil/pixdesc.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libavutil/dict.h>
#include <libavutil/frame.h>
#include <libswscale/swscale.h>
#include <libswresample/swresample.h>
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>

static inline int64_t vitrine_av_nopts_value(void) { return AV_NOPTS_VALUE; }
static inline int vitrine_averror_eof(void) { return AVERROR_EOF; }
static inline int vitrine_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int vitrine_averror_exit(void) { return AVERROR_EXIT; }
static inline int vitrine_averror_invaliddata(void) { return AVERROR_INVALIDDATA; }
static inline int vitrine_averror_decoder_not_found(void) { return AVERROR_DECODER_NOT_FOUND; }
static inline int vitrine_av_time_base(void) { return AV_TIME_BASE; }
static inline AVRational vitrine_av_time_base_q(void) { AVRational r = { 1, AV_TIME_BASE }; return r; }
static inline int vitrine_av_dict_ignore_suffix(void) { return AV_DICT_IGNORE_SUFFIX; }
static inline int vitrine_avseek_flag_backward(void) { return AVSEEK_FLAG_BACKWARD; }
static inline int vitrine_av_pkt_flag_key(void) { return AV_PKT_FLAG_KEY; }
static inline int vitrine_av_disposition_attached_pic(void) { return AV_DISPOSITION_ATTACHED_PIC; }
static inline int vitrine_av_disposition_default(void) { return AV_DISPOSITION_DEFAULT; }
static inline int vitrine_av_disposition_forced(void) { return AV_DISPOSITION_FORCED; }
static inline int vitrine_sws_bicubic(void) { return SWS_BICUBIC; }
static inline int vitrine_sws_bilinear(void) { return SWS_BILINEAR; }
static inline int vitrine_sws_accurate_rnd(void) { return SWS_ACCURATE_RND; }
static inline int vitrine_sws_full_chr_h_int(void) { return SWS_FULL_CHR_H_INT; }
static inline int vitrine_av_log_error(void) { return AV_LOG_ERROR; }

/// The display-matrix rotation of a stream in degrees (counter-clockwise as FFmpeg reports), or NAN.
static inline double vitrine_stream_display_rotation(const AVStream *stream) {
    size_t size = 0;
    const uint8_t *matrix = av_stream_get_side_data(stream, AV_PKT_DATA_DISPLAYMATRIX, &size);
    if (!matrix || size < 9 * sizeof(int32_t)) return NAN;
    return av_display_rotation_get((const int32_t *)matrix);
}

/// The interrupt callback FFmpeg polls during blocking I/O; the opaque pointer
/// is a deadline in CLOCK_MONOTONIC nanoseconds (0 = none) plus a cancel flag.
/// Other threads set both while FFmpeg's thread polls them: every access is atomic.
typedef struct VitrineIODeadline {
    int64_t deadlineNanoseconds;
    int cancelled;
} VitrineIODeadline;

#include <time.h>
static inline int vitrine_io_interrupt(void *opaque) {
    VitrineIODeadline *d = (VitrineIODeadline *)opaque;
    if (!d) return 0;
    if (__atomic_load_n(&d->cancelled, __ATOMIC_SEQ_CST)) return 1;
    int64_t deadline = __atomic_load_n(&d->deadlineNanoseconds, __ATOMIC_SEQ_CST);
    if (deadline == 0) return 0;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    int64_t now = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return now > deadline;
}
static inline void vitrine_install_interrupt(AVFormatContext *ctx, VitrineIODeadline *deadline) {
    ctx->interrupt_callback.callback = vitrine_io_interrupt;
    ctx->interrupt_callback.opaque = deadline;
}

/// Sets the cancel flag from any thread; FFmpeg's next interrupt poll aborts the blocking call.
static inline void vitrine_io_cancel(VitrineIODeadline *d) { __atomic_store_n(&d->cancelled, 1, __ATOMIC_SEQ_CST); }
/// Whether the cancel flag is set.
static inline int vitrine_io_is_cancelled(const VitrineIODeadline *d) { return __atomic_load_n(&d->cancelled, __ATOMIC_SEQ_CST); }
/// Arms the deadline `timeoutNanoseconds` from now (0 disarms it).
static inline void vitrine_io_arm(VitrineIODeadline *d, int64_t timeoutNanoseconds) {
    int64_t deadline = 0;
    if (timeoutNanoseconds > 0) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        deadline = (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec + timeoutNanoseconds;
    }
    __atomic_store_n(&d->deadlineNanoseconds, deadline, __ATOMIC_SEQ_CST);
}
static inline int vitrine_averror_enoent(void) { return AVERROR(ENOENT); }
static inline int vitrine_averror_econnrefused(void) { return AVERROR(ECONNREFUSED); }
static inline int vitrine_averror_etimedout(void) { return AVERROR(ETIMEDOUT); }
static inline int vitrine_averror_enomem(void) { return AVERROR(ENOMEM); }
static inline int vitrine_averror_stream_not_found(void) { return AVERROR_STREAM_NOT_FOUND; }
static inline int vitrine_av_pkt_flag_corrupt(void) { return AV_PKT_FLAG_CORRUPT; }
static inline int vitrine_av_codec_flag_global_header(void) { return AV_CODEC_FLAG_GLOBAL_HEADER; }
static inline int vitrine_av_codec_cap_small_last_frame(void) { return AV_CODEC_CAP_SMALL_LAST_FRAME; }
static inline int vitrine_avfmt_globalheader(void) { return AVFMT_GLOBALHEADER; }
static inline int vitrine_avio_flag_write(void) { return AVIO_FLAG_WRITE; }

#endif
