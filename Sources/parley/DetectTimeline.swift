// `parley detect --timeline PATH.svg`: a picture of who talked when.
//
// One lane per participant with talking segments as bars, an "overlap" lane (and a light band
// across the lanes) where two or more people talk, and a time axis whose tick step is chosen
// from 1-2-5-style steps so that there are 5 to 10 ticks whatever the length. Bars are drawn
// per column (one pixel, or up to 8 when zoomed out): a column's opacity is the share of its
// time that was talk, so a 2-hour meeting shows where talk is dense or sparse instead of solid
// bars, a 2-minute one shows crisp segments, and the file stays small at any length.

import ParleyCall
import ParleyDetect

/// Width of the whole picture, of the label column and of the right margin, in pixels.
private let svgWidth = 1200.0, labelWidth = 200.0, rightMargin = 24.0
private let laneHeight = 26.0, laneGap = 8.0, overlapLaneHeight = 10.0
/// The colours of participants, in order, in every picture the tool draws.
let participantPalette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2",
                          "#17becf", "#bcbd22", "#7f7f7f", "#d62728"]

/// The tick step, in seconds, for an axis of `duration` seconds: the smallest "nice" step
/// that gives at most 10 ticks.
func timelineTickStep(duration: Double) -> Double {
    let steps: [Double] = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800,
                           3600, 7200, 10800, 21600, 43200, 86400]
    for s in steps where duration / s <= 10 { return s }
    var s = 86400.0
    while duration / s > 10 { s *= 2 }
    return s
}

/// A tick label: `12s`, `1.5s`, `m:ss` or `h:mm`, depending on the step.
func timelineTickLabel(_ t: Double, step: Double) -> String {
    if step < 1 { return fixed(t, 1) + "s" }
    let s = Int(t.rounded())
    if step < 60 && s < 60 { return "\(s)s" }
    if step < 3600 && s < 3600 { return "\(s / 60):" + pad2(s % 60) }
    if step < 60 { return "\(s / 3600):" + pad2(s / 60 % 60) + ":" + pad2(s % 60) }
    return "\(s / 3600)h" + pad2(s / 60 % 60)
}

/// Width, in pixels, of the columns ``coverageRuns(_:secondsPerPixel:pixels:)`` averages
/// over: one pixel up to a second per pixel (meetings up to about 16 minutes: crisp segments),
/// then up to 8 pixels so that a column spans about 30 s (a 2-hour meeting: ~37 s columns),
/// which smooths the stripes that talk every few seconds would draw.
func timelineColumnWidth(secondsPerPixel: Double) -> Int {
    secondsPerPixel <= 1 ? 1 : min(8, Int((30 / secondsPerPixel).rounded(.up)))
}

/// How much of each column of `timelineColumnWidth` pixels is covered by `segments`, as runs
/// of equal level: a column's level is the share of its time that was talk, rounded up to an
/// eighth (any talk at all shows); neighbouring columns of the same level make one run.
/// Zoomed in, runs are the segments themselves; zoomed out (hours on a thousand pixels), the
/// level shows where talk was dense or sparse instead of one solid bar.
func coverageRuns(_ segments: [TalkSegment], secondsPerPixel: Double, pixels: Int)
    -> [(start: Int, end: Int, level: Double)] {
    let width = timelineColumnWidth(secondsPerPixel: secondsPerPixel)
    let columnSeconds = secondsPerPixel * Double(width)
    let columns = (pixels + width - 1) / width
    var coverage = [Double](repeating: 0, count: columns)
    for s in segments where s.end > s.start {
        let a = s.start / columnSeconds, b = s.end / columnSeconds
        var k = max(0, Int(a))
        while k < columns && Double(k) < b {
            coverage[k] += min(b, Double(k + 1)) - max(a, Double(k))
            k += 1
        }
    }
    var runs: [(start: Int, end: Int, level: Double)] = []
    for k in 0..<columns {
        let level = min(1, (coverage[k] * 8 - 1e-6).rounded(.up) / 8)
        guard level > 0 else { continue }
        let start = k * width, end = min(pixels, (k + 1) * width)
        if let last = runs.last, last.end == start, last.level == level {
            runs[runs.count - 1].end = end
        } else {
            runs.append((start, end, level))
        }
    }
    return runs
}

/// The time ranges during which two or more of `tracks` talk.
func overlapRanges(_ tracks: [[TalkSegment]]) -> [TalkSegment] {
    var edges: [(Double, Int)] = []
    for segs in tracks {
        for s in segs where s.end > s.start {
            edges.append((s.start, 1))
            edges.append((s.end, -1))
        }
    }
    edges.sort { $0.0 < $1.0 || ($0.0 == $1.0 && $0.1 < $1.1) }
    var out: [TalkSegment] = []
    var count = 0
    var openedAt = 0.0
    for (t, d) in edges {
        let before = count
        count += d
        if before < 2 && count >= 2 { openedAt = t }
        if before >= 2 && count < 2 && t > openedAt { out.append(TalkSegment(orderedStart: openedAt, end: t)) }
    }
    return out
}

/// `s` as XML character data or an attribute value.
func xmlEscaped(_ s: String) -> String {
    var out = ""
    for ch in s {
        switch ch {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(ch)
        }
    }
    return out
}

/// The SVG document for `recordings`: one group of lanes per recording, a shared time axis.
func timelineSVG(_ recordings: [DetectRecording], version: String) -> String {
    let duration = max(1.0, recordings.map(\.duration).max() ?? 0)
    let plotWidth = svgWidth - labelWidth - rightMargin
    let secondsPerPixel = duration / plotWidth
    func x(_ t: Double) -> Double { labelWidth + t / secondsPerPixel }
    func px(_ v: Double) -> String { fixed(v, 1) }
    // Any talk in a column shows at 0.3 or more; full columns are opaque.
    func opacity(_ level: Double) -> String { level >= 1 ? "" : " fill-opacity=\"\(fixed(0.3 + 0.7 * level, 3))\"" }
    let pixels = Int(plotWidth)

    var body = ""
    var y = 40.0
    let plotTop = y
    var colorIndex = 0
    for r in recordings {
        if recordings.count > 1 {
            let n = r.tracks.count
            body += "<text x=\"8\" y=\"\(px(y + 14))\" class=\"rec\">\(xmlEscaped(r.name)) "
                + "(\(n) participant\(n == 1 ? "" : "s"), \(clock(r.duration)))</text>\n"
            y += 22
        }
        let overlaps = coverageRuns(overlapRanges(r.tracks.map(\.segments)),
                                    secondsPerPixel: secondsPerPixel, pixels: pixels)
        let groupTop = y
        for (ti, t) in r.tracks.enumerated() {
            let color = participantPalette[colorIndex % participantPalette.count]
            colorIndex += 1
            let share = ti < r.statistics.participants.count ? r.statistics.participants[ti].shareOfTalk : 0
            body += "<rect x=\"\(px(labelWidth))\" y=\"\(px(y))\" width=\"\(px(plotWidth))\" height=\"\(px(laneHeight))\" class=\"lane\"/>\n"
            body += "<text x=\"8\" y=\"\(px(y + laneHeight / 2 + 4))\" class=\"name\">\(xmlEscaped(t.name))</text>\n"
            body += "<text x=\"\(px(labelWidth - 6))\" y=\"\(px(y + laneHeight / 2 + 4))\" class=\"share\">\(percent(share))</text>\n"
            body += "<g fill=\"\(color)\">"
            for run in coverageRuns(t.segments, secondsPerPixel: secondsPerPixel, pixels: pixels) {
                body += "<rect x=\"\(px(labelWidth + Double(run.start)))\" y=\"\(px(y + 3))\" width=\"\(run.end - run.start)\" "
                    + "height=\"\(px(laneHeight - 6))\"\(opacity(run.level))/>"
            }
            body += "</g>\n"
            y += laneHeight + laneGap
        }
        if r.tracks.count > 1 {
            // Light bands across the lanes, and a lane of their own, where two or more talk.
            body += "<g class=\"band\">"
            for run in overlaps {
                body += "<rect x=\"\(px(labelWidth + Double(run.start)))\" y=\"\(px(groupTop))\" width=\"\(run.end - run.start)\" "
                    + "height=\"\(px(y - groupTop - laneGap))\" fill-opacity=\"\(fixed(0.13 * run.level, 3))\"/>"
            }
            body += "</g>\n"
            body += "<text x=\"8\" y=\"\(px(y + overlapLaneHeight - 1))\" class=\"small\">overlap (2+ talking)</text>\n"
            body += "<rect x=\"\(px(labelWidth))\" y=\"\(px(y))\" width=\"\(px(plotWidth))\" height=\"\(px(overlapLaneHeight))\" class=\"lane\"/>\n"
            body += "<g class=\"overlap\">"
            for run in overlaps {
                body += "<rect x=\"\(px(labelWidth + Double(run.start)))\" y=\"\(px(y))\" width=\"\(run.end - run.start)\" "
                    + "height=\"\(px(overlapLaneHeight))\"\(opacity(run.level))/>"
            }
            body += "</g>\n"
            y += overlapLaneHeight + laneGap
        }
        y += 6
    }
    let plotBottom = y

    // The time axis: grid lines through the lanes, ticks and labels below.
    let step = timelineTickStep(duration: duration)
    var axis = "<line x1=\"\(px(labelWidth))\" y1=\"\(px(plotBottom))\" x2=\"\(px(labelWidth + plotWidth))\" y2=\"\(px(plotBottom))\" class=\"axis\"/>\n"
    var t = 0.0
    while t <= duration + 1e-9 {
        let tx = x(t)
        axis += "<line x1=\"\(px(tx))\" y1=\"\(px(plotTop))\" x2=\"\(px(tx))\" y2=\"\(px(plotBottom))\" class=\"grid\"/>"
        axis += "<line x1=\"\(px(tx))\" y1=\"\(px(plotBottom))\" x2=\"\(px(tx))\" y2=\"\(px(plotBottom + 5))\" class=\"axis\"/>"
        axis += "<text x=\"\(px(tx))\" y=\"\(px(plotBottom + 18))\" class=\"tick\">\(timelineTickLabel(t, step: step))</text>\n"
        t += step
    }
    let height = plotBottom + 34
    let title = recordings.count == 1
        ? "\(recordings[0].name): who talked when (\(clock(recordings[0].duration)))"
        : "who talked when: \(recordings.count) recordings"

    var svg = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(svgWidth))\" height=\"\(Int(height.rounded(.up)))\" "
        + "viewBox=\"0 0 \(Int(svgWidth)) \(Int(height.rounded(.up)))\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n"
    svg += "<!-- parley \(xmlEscaped(version)) detect timeline -->\n"
    svg += "<style>.lane{fill:#f3f3f3}.name{font-size:13px;fill:#222}.share{font-size:11px;fill:#666;text-anchor:end}"
        + ".rec{font-size:13px;font-weight:bold;fill:#222}.small{font-size:10px;fill:#666}"
        + ".band{fill:#d62728}.overlap{fill:#d62728}"
        + ".grid{stroke:#000;stroke-opacity:0.08}.axis{stroke:#444}.tick{font-size:11px;fill:#444;text-anchor:middle}"
        + ".title{font-size:15px;font-weight:bold;fill:#111}</style>\n"
    svg += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n"
    svg += "<text x=\"8\" y=\"24\" class=\"title\">\(xmlEscaped(title))</text>\n"
    svg += body + axis + "</svg>\n"
    return svg
}
