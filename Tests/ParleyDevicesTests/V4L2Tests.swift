import CV4L2
import Foundation
import Testing
@testable import ParleyDevices

/// No kernel here offers a V4L2 device: these tests cover every error path a missing or wrong
/// node can take, and the pure parts of capture (plane copy, size/rate bookkeeping). The
/// streaming path itself (S_FMT success, REQBUFS, mmap, DQBUF) can only be compiled here.
@Suite struct V4L2Tests {
    func openError(_ path: String, request: V4L2Request = V4L2Request()) -> V4L2Error? {
        do {
            let cam = try V4L2Capture(device: path, request: request)
            try cam.close()
            return nil
        } catch {
            return error
        }
    }

    @Test func aRequestOutOfRangeIsRejectedBeforeTheDeviceIsOpened() {
        let path = "/tmp/parley-no-such-video-\(UUID().uuidString)"
        for request in [V4L2Request(framesPerSecond: 0), V4L2Request(framesPerSecond: -30),
                        V4L2Request(bufferCount: 1)] {
            let e = openError(path, request: request)
            #expect(e?.kind == .invalidRequest && e?.operation == "request")
        }
        // A good request gets as far as looking for the node.
        #expect(openError(path, request: V4L2Request(framesPerSecond: 15, bufferCount: 2))?.kind == .noSuchDevice)
    }

    @Test func missingNodeIsNoSuchDevice() {
        let path = "/tmp/parley-no-such-video-\(UUID().uuidString)"
        let e = openError(path)
        #expect(e?.kind == .noSuchDevice)
        #expect(e?.operation == "stat")
        #expect(e?.errno == .noSuchFile)
        #expect(e?.description.contains(path) == true)
        #expect(e?.description.contains("connected") == true)
    }

    @Test(.enabled(if: !FileManager.default.fileExists(atPath: "/dev/video0"), "this machine has a /dev/video0"))
    func absentDevVideo0IsNoSuchDeviceNamingTheNode() {
        let e = openError("/dev/video0")
        #expect(e?.kind == .noSuchDevice)
        #expect(e?.description.hasPrefix("camera /dev/video0:") == true)
    }

    @Test func regularFileIsNotACharacterDevice() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-video-\(UUID().uuidString)").path
        try Data(repeating: 0, count: 64).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let e = openError(path)
        #expect(e?.kind == .notACharacterDevice)
        #expect(e?.detail == "a regular file")
    }

    @Test func directoryIsNotACharacterDevice() {
        let e = openError(FileManager.default.temporaryDirectory.path)
        #expect(e?.kind == .notACharacterDevice)
        #expect(e?.detail == "a directory")
    }

    @Test func devNullIsNotAVideoDevice() {
        let e = openError("/dev/null")
        #expect(e?.kind == .notAVideoDevice)
        #expect(e?.operation == "v4l2_open (VIDIOC_QUERYCAP)")
        #expect(e?.errno == .inappropriateIOControl)
    }

    /// Makes a character node with the V4L2 major (81) and an unused minor, if permitted.
    static func makeDriverlessVideoNode() -> String? {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("parley-video-node-\(UUID().uuidString)").path
        return mknod(path, S_IFCHR | 0o600, dev_t((81 << 8) | 250)) == 0 ? path : nil
    }

    @Test(.enabled(if: makeDriverlessVideoNode().map { unlink($0); return true } ?? false, "mknod not permitted"))
    func videoNodeWithoutADriverIsNoSuchDevice() throws {
        // A node with no driver behind it: open() gives ENXIO/ENODEV, as when a camera is
        // unplugged while its node remains.
        let path = try #require(Self.makeDriverlessVideoNode())
        defer { unlink(path) }
        let e = openError(path)
        #expect(e?.kind == .noSuchDevice)
        #expect(e?.operation == "open")
    }

    @Test func listingFindsVideoNodesInNumericOrderAndExplainsFailures() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("parley-dev-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        for name in ["video10", "video2", "audio0"] {
            try Data().write(to: dir.appendingPathComponent(name))
        }
        let found = V4L2Devices.list(directory: dir.path)
        #expect(found.map { ($0.path as NSString).lastPathComponent } == ["video2", "video10"])
        #expect(found.allSatisfy { $0.error?.kind == .notACharacterDevice && $0.capabilities == nil })
        #expect(V4L2Devices.list(directory: "/nonexistent-parley").isEmpty)
    }

    @Test func ioctlRequestNumbersAndFourccsMatchTheKernelHeaders() {
        #expect(parley_VIDIOC_QUERYCAP() == 0x8068_5600)  // _IOR('V', 0, 104-byte v4l2_capability)
        #expect(parley_VIDIOC_STREAMON() == 0x4004_5612)  // _IOW('V', 18, int)
        #expect(V4L2.fourcc(parley_V4L2_PIX_FMT_YUV420()) == "YU12")
        #expect(V4L2.fourcc(parley_V4L2_PIX_FMT_MJPEG()) == "MJPG")
    }

    @Test func planesWithPaddedRowsCopyIntoATightFrame() throws {
        // 6x4 picture, rows padded to 8 bytes (chroma 4): Y = 10*row+col, U = 100+.., V = 200+..
        let w = 6, h = 4, bpl = 8
        var src = [UInt8](repeating: 0xEE, count: bpl * h + 2 * (bpl / 2) * (h / 2))
        for r in 0..<h { for c in 0..<w { src[r * bpl + c] = UInt8(10 * r + c) } }
        for r in 0..<2 { for c in 0..<3 {
            src[bpl * h + r * 4 + c] = UInt8(100 + 10 * r + c)
            src[bpl * h + 8 + r * 4 + c] = UInt8(200 + 10 * r + c)
        } }
        var frame = try VideoFrame(width: w, height: h)
        let ok = src.withUnsafeBytes { V4L2.copyI420(from: $0, bytesPerLine: bpl, into: &frame) }
        #expect(ok)
        #expect(Array(frame.data[0..<24]) == (0..<4).flatMap { r in (0..<6).map { UInt8(10 * r + $0) } })
        #expect(Array(frame.data[24..<30]) == [100, 101, 102, 110, 111, 112])
        #expect(Array(frame.data[30..<36]) == [200, 201, 202, 210, 211, 212])
        let short = src.withUnsafeBytes { V4L2.copyI420(from: UnsafeRawBufferPointer(rebasing: $0[0..<40]), bytesPerLine: bpl, into: &frame) }
        #expect(!short)
    }

    @Test func offeredSizesAndRatesAreCheckedExactly() {
        let discrete = FrameSizeOffer.discrete([FrameSize(width: 640, height: 480), FrameSize(width: 1280, height: 720)])
        #expect(discrete.offers(FrameSize(width: 1280, height: 720)))
        #expect(!discrete.offers(FrameSize(width: 800, height: 600)))
        #expect(discrete.description == "640x480, 1280x720")
        let stepwise = FrameSizeOffer.stepwise(min: FrameSize(width: 160, height: 120),
                                               max: FrameSize(width: 1920, height: 1080),
                                               step: FrameSize(width: 16, height: 8))
        #expect(stepwise.offers(FrameSize(width: 640, height: 480)))
        #expect(!stepwise.offers(FrameSize(width: 650, height: 480)))
        #expect(!stepwise.offers(FrameSize(width: 3840, height: 2160)))
        #expect(V4L2.fraction(for: 30) == (1, 30))
        #expect(V4L2.fraction(for: 29.97) == (1000, 29_970))
        #expect(V4L2.rate(v4l2_fract(numerator: 1, denominator: 15)) == "15")
    }
}
