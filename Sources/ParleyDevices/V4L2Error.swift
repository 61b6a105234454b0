/// A camera that cannot be opened or streamed, said in terms of what to check.
///
/// Threading: a value type; freely sendable.
public struct V4L2Error: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// No node at the path, or no driver behind the node (ENOENT, ENODEV, ENXIO).
        case noSuchDevice
        /// The path is a regular file or a directory, not a device node.
        case notACharacterDevice
        /// A character device that does not speak V4L2 (VIDIOC_QUERYCAP fails: ENOTTY/EINVAL).
        case notAVideoDevice
        /// A V4L2 device without video capture (an output, a codec, a radio, metadata node).
        case notACaptureDevice
        /// A capture device without mmap streaming (read()-only drivers are not supported).
        case streamingNotSupported
        /// Another program is streaming from the camera (EBUSY).
        case busy
        /// The user may not open the node (EACCES/EPERM; usually: not in the `video` group).
        case permissionDenied
        /// The camera (even through libv4lconvert) cannot deliver I420.
        case formatNotOffered
        /// The requested picture size is not offered; ``V4L2Error/detail`` lists the sizes.
        case sizeNotOffered
        /// The requested or minimum frame rate is not offered; ``V4L2Error/detail`` lists rates.
        case rateNotOffered
        /// No picture within the timeout.
        case timeout
        /// The ``V4L2Request`` itself is out of range (a frame rate that is not positive, fewer
        /// than two buffers); the device was not opened.
        case invalidRequest
        /// Any other failure; see ``V4L2Error/errno``.
        case other
    }

    /// The kind of failure.
    public var kind: Kind
    /// The device path (`/dev/video0`).
    public var device: String
    /// The step that failed (`stat`, `open`, `VIDIOC_QUERYCAP`, `VIDIOC_S_FMT`, ...).
    public var operation: String
    /// The system error, when there was one.
    public var errno: Errno?
    /// What the device offers, or other detail.
    public var detail: String?

    public init(kind: Kind, device: String, operation: String, errno: Errno? = nil, detail: String? = nil) {
        self.kind = kind; self.device = device; self.operation = operation
        self.errno = errno; self.detail = detail
    }

    /// Maps an errno from opening or an ioctl to a kind.
    static func from(_ e: Errno, device: String, operation: String) -> V4L2Error {
        let kind: Kind
        switch e {
        case .noSuchFile, .noSuchDevice, .noSuchDeviceOrAddress: kind = .noSuchDevice
        case .busy: kind = .busy
        case .permissionDenied, .notPermitted: kind = .permissionDenied
        case .isDirectory: kind = .notACharacterDevice
        case .inappropriateIOControl where operation == "VIDIOC_QUERYCAP": kind = .notAVideoDevice
        case .invalidArgument where operation == "VIDIOC_QUERYCAP": kind = .notAVideoDevice
        default: kind = .other
        }
        return V4L2Error(kind: kind, device: device, operation: operation, errno: e)
    }

    /// What to check, by kind.
    public var advice: String {
        switch kind {
        case .noSuchDevice:
            return "check that the camera is connected and its driver loaded ('parley devices' lists video nodes; "
                + "'ls /dev/video*'; in a container, pass the device through)"
        case .notACharacterDevice: return "give the camera's device node, such as /dev/video0"
        case .notAVideoDevice: return "this node is not a V4L2 device; 'parley devices' lists the video nodes"
        case .notACaptureDevice: return "this V4L2 node cannot capture video; cameras often have a second node for metadata, try another /dev/videoN"
        case .streamingNotSupported: return "the driver does not support mmap streaming"
        case .busy: return "another program is using the camera; close it and retry"
        case .permissionDenied: return "check the node's permissions (usually: membership of the 'video' group)"
        case .formatNotOffered: return "the camera offers no format libv4lconvert can turn into I420"
        case .sizeNotOffered: return "choose one of the offered sizes"
        case .rateNotOffered: return "choose an offered frame rate, or a smaller size (cameras often slow down at large sizes)"
        case .timeout: return "the camera delivered no picture; check lighting/privacy shutter and the USB connection"
        case .invalidRequest: return "ask for a positive frame rate and at least two buffers"
        case .other: return "see the system error"
        }
    }

    public var description: String {
        var s = "camera \(device): \(operation) failed"
        if let errno { s += ": \(errno) (errno \(errno.rawValue))" }
        if let detail { s += " (\(detail))" }
        return s + "; " + advice
    }
}
