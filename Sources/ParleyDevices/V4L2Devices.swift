import CV4L2
#if canImport(Glibc)
import Glibc
#endif

/// One `/dev/video*` node and what it said, or why it could not be asked.
public struct V4L2DeviceInfo: Sendable {
    /// The node path (`/dev/video0`).
    public var path: String
    /// Its capabilities, when `VIDIOC_QUERYCAP` answered.
    public var capabilities: V4L2Capabilities?
    /// Formats offered for capture (with libv4lconvert's emulated ones).
    public var formats: [PixelFormatDescription]
    /// Why the node could not be opened or queried, if so.
    public var error: V4L2Error?
}

/// Finds video nodes.
public enum V4L2Devices {
    /// The `video*` nodes under `directory` (default `/dev`), in numeric order, each opened
    /// briefly and queried. An empty list means no camera nodes exist.
    public static func list(directory: String = "/dev") -> [V4L2DeviceInfo] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = V4L2.string(entry.pointee.d_name)
            if name.hasPrefix("video") { names.append(name) }
        }
        names.sort { a, b in
            let na = Int(a.dropFirst(5)) ?? Int.max, nb = Int(b.dropFirst(5)) ?? Int.max
            return na != nb ? na < nb : a < b
        }
        return names.map { name in
            let path = directory + "/" + name
            do throws(V4L2Error) {
                let fd = try V4L2.open(path)
                let handle = V4L2Handle(fd: fd)
                let caps = try V4L2.queryCapabilities(handle.fd, device: path)
                let formats = caps.canCapture ? V4L2.formats(handle.fd) : []
                _ = handle.close()
                return V4L2DeviceInfo(path: path, capabilities: caps, formats: formats, error: nil)
            } catch {
                return V4L2DeviceInfo(path: path, capabilities: nil, formats: [], error: error)
            }
        }
    }
}
