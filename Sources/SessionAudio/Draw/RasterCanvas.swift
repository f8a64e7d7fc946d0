internal import CCairo
package import Foundation

/// A picture drawn in pixels with cairo and handed out as PNG: filled rectangles and polygons,
/// lines, and text in DejaVu Sans. Owns its `cairo_surface_t` and `cairo_t` and frees them in
/// `deinit`.
///
/// Drawing is deterministic: the same calls give the same bytes on the same cairo and fonts. Text
/// is drawn unhinted with grey antialiasing, so the glyphs do not depend on a machine's font
/// settings (fontconfig's hinting and subpixel order are per machine).
package final class RasterCanvas {
    private let surface: OpaquePointer
    private let context: OpaquePointer
    /// The size in pixels.
    package let width: Int
    package let height: Int

    /// A white canvas of `width` × `height` pixels.
    ///
    /// The corresponding cairo calls are `cairo_image_surface_create` (RGB, 24 bits) and `cairo_create`.
    /// - Throws: ``AudioError`` (`cannotWrite`) when cairo cannot make it (a size it refuses, no memory).
    package init(width: Int, height: Int) throws(AudioError) {
        try LazyLibrary.cairo.load(or: .cannotWrite, path: "a picture")
        guard (1...32_767).contains(width), (1...32_767).contains(height),
            let surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, Int32(width), Int32(height))
        else {
            throw AudioError(.cannotWrite, path: "a picture", reason: "cairo cannot make \(width) × \(height) pixels")
        }
        let surfaceStatus = cairo_surface_status(surface)
        guard surfaceStatus == CAIRO_STATUS_SUCCESS, let context = cairo_create(surface) else {
            cairo_surface_destroy(surface)
            throw Self.failure(surfaceStatus, making: "\(width) × \(height) pixels")
        }
        self.surface = surface
        self.context = context
        self.width = width
        self.height = height
        let options = cairo_font_options_create()
        cairo_font_options_set_antialias(options, CAIRO_ANTIALIAS_GRAY)
        cairo_font_options_set_hint_style(options, CAIRO_HINT_STYLE_NONE)
        cairo_font_options_set_hint_metrics(options, CAIRO_HINT_METRICS_OFF)
        cairo_set_font_options(context, options)
        cairo_font_options_destroy(options)
        cairo_select_font_face(context, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL)
        cairo_set_source_rgb(context, 1, 1, 1)
        cairo_paint(context)
    }

    deinit {
        cairo_destroy(context)
        cairo_surface_destroy(surface)
    }

    /// Fills the rectangle from (`x`, `y`) `width` wide and `height` high with `color` (`#rrggbb`).
    package func fillRectangle(x: Double, y: Double, width: Double, height: Double, color: String) {
        setColor(color)
        cairo_rectangle(context, x, y, width, height)
        cairo_fill(context)
    }

    /// Fills the polygon through `points` (closed back to the first) with `color`.
    package func fillPolygon(_ points: [(x: Double, y: Double)], color: String) {
        guard trace(points) else { return }
        cairo_close_path(context)
        setColor(color)
        cairo_fill(context)
    }

    /// Draws a line through `points`, `lineWidth` pixels wide, in `color`.
    package func strokeLine(_ points: [(x: Double, y: Double)], color: String, lineWidth: Double = 1) {
        guard trace(points) else { return }
        setColor(color)
        cairo_set_line_width(context, lineWidth)
        cairo_stroke(context)
    }

    /// Draws `text` in DejaVu Sans at `size` pixels, its baseline at `y`; `anchor` is the share of
    /// its width left of `x` (0 starts it there, 0.5 centres it, 1 ends it there).
    package func drawText(_ text: String, x: Double, y: Double, size: Double, anchor: Double, color: String) {
        guard !text.isEmpty else { return }
        cairo_set_font_size(context, size)
        var extents = cairo_text_extents_t()
        cairo_text_extents(context, text, &extents)
        setColor(color)
        cairo_move_to(context, x - anchor * extents.x_advance, y)
        cairo_show_text(context, text)
    }

    /// The picture as PNG bytes.
    ///
    /// The corresponding cairo call is `cairo_surface_write_to_png_stream`.
    /// - Throws: ``AudioError`` (`cannotWrite`) when drawing or encoding failed (no memory).
    package func png() throws(AudioError) -> Data {
        let drawn = cairo_status(context)
        guard drawn == CAIRO_STATUS_SUCCESS else { throw Self.failure(drawn, making: "the picture") }
        final class Sink { var data = Data() }
        let sink = Sink()
        let status = cairo_surface_write_to_png_stream(
            surface,
            { closure, bytes, length in
                guard let closure, let bytes else { return CAIRO_STATUS_WRITE_ERROR }
                Unmanaged<Sink>.fromOpaque(closure).takeUnretainedValue().data.append(bytes, count: Int(length))
                return CAIRO_STATUS_SUCCESS
            },
            Unmanaged.passUnretained(sink).toOpaque()
        )
        guard status == CAIRO_STATUS_SUCCESS else { throw Self.failure(status, making: "the PNG") }
        return sink.data
    }

    /// Begins a path through `points`; false (and no path) for fewer than two.
    private func trace(_ points: [(x: Double, y: Double)]) -> Bool {
        guard let first = points.first, points.count >= 2 else { return false }
        cairo_new_path(context)
        cairo_move_to(context, first.x, first.y)
        for point in points.dropFirst() { cairo_line_to(context, point.x, point.y) }
        return true
    }

    /// Sets cairo's source to `#rrggbb`; anything else is a programmer's error.
    private func setColor(_ hex: String) {
        precondition(hex.count == 7 && hex.first == "#", "a colour is #rrggbb, not \(hex)")
        guard let value = UInt32(hex.dropFirst(), radix: 16) else { preconditionFailure("not hex: \(hex)") }
        cairo_set_source_rgb(
            context,
            Double(value >> 16 & 0xFF) / 255,
            Double(value >> 8 & 0xFF) / 255,
            Double(value & 0xFF) / 255
        )
    }

    private static func failure(_ status: cairo_status_t, making what: String) -> AudioError {
        AudioError(
            .cannotWrite,
            path: "a picture",
            reason: "cairo cannot make \(what): \(String(cString: cairo_status_to_string(status)))",
            libraryCode: AudioError.LibraryCode(.cairo, Int32(status.rawValue))
        )
    }
}
