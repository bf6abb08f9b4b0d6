#ifndef WB_VIPS_SHIM_H
#define WB_VIPS_SHIM_H

/* libvips for the Imaging module. Most libvips calls are C variadic (name/value option pairs ending in
 * NULL), which Swift cannot call: each one used is wrapped below with its options as named parameters.
 * Every function returns 0 on success and -1 on failure (the message is in vips_error_buffer). */
#define VIPS_DISABLE_VIPS7COMPAT 1
#include <vips/vips.h>

static inline void wb_vips_drop_log(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer user) {
    (void) domain; (void) level; (void) message; (void) user;
}

/* Once per process: start libvips, silence its warnings (a hostile upload would fill stderr with "error in
 * tile"; failures come back as errors anyway), block every loader except the four we decode (and libvips' own
 * "untrusted" list on top), no operation cache, one worker thread per pipeline. Returns 0 on success. */
static inline int wb_vips_setup(void) {
    if (VIPS_INIT("weatherboard") != 0) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING, wb_vips_drop_log, NULL);
    vips_block_untrusted_set(TRUE);
    vips_operation_block_set("VipsForeignLoad", TRUE);
    vips_operation_block_set("VipsForeignLoadJpegFile", FALSE);
    vips_operation_block_set("VipsForeignLoadPngFile", FALSE);
    vips_operation_block_set("VipsForeignLoadWebpFile", FALSE);
    vips_operation_block_set("VipsForeignLoadHeifFile", FALSE);
    vips_cache_set_max(0);
    vips_cache_set_max_mem(0);
    vips_cache_set_max_files(0);
    vips_concurrency_set(1);
    return 0;
}

/* Loaders: lazy, sequential; only the header is read until pixels are asked for. */
static inline int wb_vips_jpegload(const char *path, VipsImage **out, int shrink, VipsFailOn fail_on) {
    return vips_jpegload(path, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail_on, "shrink", shrink, NULL);
}
static inline int wb_vips_pngload(const char *path, VipsImage **out, VipsFailOn fail_on) {
    return vips_pngload(path, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail_on, NULL);
}
static inline int wb_vips_webpload(const char *path, VipsImage **out, double scale, VipsFailOn fail_on) {
    return vips_webpload(path, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail_on, "scale", scale, NULL);
}
static inline int wb_vips_heifload(const char *path, VipsImage **out, VipsFailOn fail_on) {
    return vips_heifload(path, out, "access", VIPS_ACCESS_SEQUENTIAL, "fail_on", fail_on, NULL);
}

/* Fit inside side x side, never enlarge; rotate upright by the EXIF orientation unless no_rotate.
 * export_srgb: transform through the embedded ICC profile to sRGB. */
static inline int wb_vips_thumbnail_image(VipsImage *in, VipsImage **out, int side, gboolean no_rotate, gboolean export_srgb) {
    if (export_srgb)
        return vips_thumbnail_image(in, out, side, "height", side, "size", VIPS_SIZE_DOWN, "no_rotate", no_rotate,
                                    "export_profile", "srgb", NULL);
    return vips_thumbnail_image(in, out, side, "height", side, "size", VIPS_SIZE_DOWN, "no_rotate", no_rotate, NULL);
}

static inline int wb_vips_colourspace_srgb(VipsImage *in, VipsImage **out) {
    return vips_colourspace(in, out, VIPS_INTERPRETATION_sRGB, NULL);
}

/* Alpha composited over white. */
static inline int wb_vips_flatten_white(VipsImage *in, VipsImage **out) {
    VipsArrayDouble *background = vips_array_double_newv(3, 255.0, 255.0, 255.0);
    int result = vips_flatten(in, out, "background", background, NULL);
    vips_area_unref(VIPS_AREA(background));
    return result;
}

static inline int wb_vips_cast_uchar(VipsImage *in, VipsImage **out) {
    return vips_cast_uchar(in, out, NULL);
}

/* JPEG with no metadata at all (strip drops EXIF, XMP, IPTC, ICC and comments). The buffer is g_free'd by
 * the caller. */
static inline int wb_vips_jpegsave_buffer(VipsImage *in, void **buf, size_t *len, int quality) {
    return vips_jpegsave_buffer(in, buf, len, "Q", quality, "strip", TRUE, "optimize_coding", TRUE, NULL);
}

static inline gboolean wb_vips_has_icc_profile(VipsImage *image) {
    return vips_image_get_typeof(image, VIPS_META_ICC_NAME) != 0;
}

/* Time limit: libvips emits "eval" on the image marked with vips_image_set_progress (and everything
 * computed from it) as a pipeline makes progress; past the deadline (g_get_monotonic_time, microseconds)
 * the handler sets the image's kill flag, and the next region asked of it fails, ending the computation. */
static inline void wb_vips_eval_deadline(VipsImage *image, VipsProgress *progress, void *user) {
    (void) progress;
    if (g_get_monotonic_time() > *(const gint64 *) user) vips_image_set_kill(image, TRUE);
}

static inline void wb_vips_set_deadline(VipsImage *image, gint64 deadline) {
    gint64 *stored = g_new(gint64, 1);
    *stored = deadline;
    vips_image_set_progress(image, TRUE);
    g_signal_connect_data(image, "eval", G_CALLBACK(wb_vips_eval_deadline), stored, (GClosureNotify) g_free, 0);
}

static inline gint64 wb_vips_monotonic_now(void) {
    return g_get_monotonic_time();
}

static inline void wb_vips_unref(VipsImage *image) {
    g_object_unref(image);
}

#endif
